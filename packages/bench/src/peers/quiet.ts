/** @file Run `f` with console.log/info/warn silenced (TF.js greets Node users on stdout). */
export async function quietly<T>(f: () => Promise<T> | T): Promise<T> {
  const saved = { log: console.log, info: console.info, warn: console.warn };
  const none = () => {};
  console.log = none;
  console.info = none;
  console.warn = none;
  try {
    return await f();
  } finally {
    Object.assign(console, saved);
  }
}
