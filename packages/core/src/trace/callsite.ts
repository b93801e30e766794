/**
 * @file Where the user called wengert from, for error messages: the first frame of
 * `new Error().stack` that is not wengert's own (core's or ops's), in any engine and
 * from any layout, or "" when that cannot be told (never a wrong place).
 *
 * Which frames are wengert's is learned, not configured: each package captures a stack
 * in its first module and in its last (extent.ts in each). Unbundled, the first
 * module's file, …/<root>/trace/extent.js in core and …/<root>/extent.js in ops, gives
 * the package's directory, and its dist/ and src/ (where source maps point) and <root>
 * are wengert's: the workspace's packages/core/dist, an installed
 * node_modules/@wengert/core/dist, or …/src/trace/tracer.ts under
 * `node --enable-source-maps`, each as a path or as a URL. Bundled, wengert and the
 * user may share a file; a bundler emits each module after those it imports, so
 * wengert's code lies between the two captured places and the user's code (which
 * imports wengert) after them. Frames without a file (native code), Node's internals,
 * and code made by wengert with new Function (at its origin, or named MADE_BY_WENGERT) are skipped; the user's code made by eval
 * has no place to name.
 */
import { opsExtent, showDims, type Dims, type Extent } from "@wengert/ops";
import { ShapeError } from "../errors.js";
import { coreExtent } from "./extent.js";
import { framesOf, showFile, type Frame } from "./frames.js";

/** The first module of each package, relative to its root (dist/ or src/). */
const FIRST_MODULE = { core: "trace/extent", ops: "extent" } as const;

/**
 * The file that code wengert makes on the user's path (the primitives' functions,
 * trace/record.ts) names itself by (`//# sourceURL=`): wengert's in any layout, bundled,
 * minified or under source maps, where the place of its `new Function` may not be.
 */
export const MADE_BY_WENGERT = "wengert:";

/** What of the stack is one package's: files under some directories, or a span of one file. */
interface Owned {
  readonly dirs: readonly string[];
  readonly span: { readonly file: string; readonly start: Frame; readonly end: Frame } | null;
}

/** `, at file:line:column` for the user's call, or "" when it cannot be told. */
export function atCallSite(): string {
  const site = callSite();
  return site ? `, at ${site}` : "";
}

let learned: readonly Owned[] | undefined;

/** `file:line:column` of the user's call, or "" when it cannot be told. */
export function callSite(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  // learned once both packages' last modules have run, which is before any user call
  const owned = learned ?? owners({ core: coreExtent, ops: opsExtent });
  if (learned === undefined && coreExtent.end !== undefined && opsExtent.end !== undefined) learned = owned;
  return userPlace(stack, owned);
}

/** The user's place in `stack` (captured in wengert), given what each package captured. */
export function callSiteIn(stack: string, extents: { readonly core: Extent; readonly ops: Extent }): string {
  return userPlace(stack, owners(extents));
}

function owners(extents: { readonly core: Extent; readonly ops: Extent }): Owned[] {
  return [owned(extents.core, FIRST_MODULE.core), owned(extents.ops, FIRST_MODULE.ops)];
}

function userPlace(stack: string, owned: readonly Owned[]): string {
  const frames = framesOf(stack).filter((f) => !isEngines(f.file));
  const ours = (f: Frame) => f.file.startsWith(MADE_BY_WENGERT) || owned.some((o) => isIn(o, f));
  // the top frame is this module's: if it is not recognised, neither would the others be
  if (frames.length === 0 || !ours(frames[0])) return "";
  const user = frames.find((f) => !ours(f));
  if (user === undefined || user.evaluated) return "";
  return `${showFile(user.file)}:${user.line}:${user.column}`;
}

/** Node's own modules: neither wengert's nor the user's. */
function isEngines(file: string): boolean {
  return file.startsWith("node:") || file.startsWith("internal/");
}

function owned(extent: Extent, firstModule: string): Owned {
  const start = framesOf(extent.start())[0];
  const end = extent.end === undefined ? undefined : framesOf(extent.end())[0];
  if (start === undefined) return { dirs: [], span: null };
  const span = end !== undefined && end.file === start.file ? { file: start.file, start, end } : null;
  // <package>/<root>/<firstModule>.js, with / or \ between, and perhaps a dev server's ?query
  const escaped = firstModule.replace(/\//g, "[\\\\/]");
  const m = new RegExp(`^(.*([\\\\/]))([^\\\\/]+)[\\\\/]${escaped}\\.[cm]?[jt]sx?(?:[?#].*)?$`).exec(start.file);
  if (m === null) return { dirs: [], span };
  const [, pkg, sep, root] = m;
  return { dirs: [...new Set([root, "dist", "src"])].map((d) => `${pkg}${d}${sep}`), span };
}

function isIn(o: Owned, f: Frame): boolean {
  // one file may be named as a path and as a file: URL in one stack: under source maps,
  // the origin of code made by new Function stays the URL the module was loaded from
  const file = comparable(f.file);
  if (o.dirs.some((d) => file.startsWith(comparable(d)))) return true;
  return o.span !== null && file === comparable(o.span.file) && before(o.span.start, f) && before(f, o.span.end);
}

/** A file as a path with forward slashes, however the stack named it. */
const comparable = (file: string): string => showFile(file).replace(/\\/g, "/");

/** a is before b in one file. */
function before(a: Frame, b: Frame): boolean {
  return a.line < b.line || (a.line === b.line && a.column < b.column);
}

/** A ShapeError naming the primitive, the shapes, and the user's call. */
export function shapeError(name: string, message: string, dims?: readonly Dims[]): ShapeError {
  const shapes = dims === undefined ? "" : ` (argument shapes ${dims.map(showDims).join(", ")})`;
  return new ShapeError(`${name}: ${message}${shapes}${atCallSite()}.`);
}
