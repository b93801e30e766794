/** The example programs, read by the build (build.mjs) from examples/*.wg and packages/playground/examples/*.wg. */
declare module "virtual:examples" {
  const examples: readonly { readonly file: string; readonly source: string; readonly group: string }[];
  export default examples;
}
