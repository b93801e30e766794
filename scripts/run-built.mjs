/**
 * @file `pnpm wengert` and `pnpm demo`: run a built entry point of the workspace, building
 * (`tsc -b`) first only when an input changed since the last build this script ran.
 *
 * `tsc -b` on an up-to-date workspace still loads the compiler and checks every file,
 * 1–10 s on a busy machine; comparing modification times here takes milliseconds. The
 * stamp's time is that of the start of the last successful build, so a file saved while
 * tsc was running is newer than the stamp and builds again next time. An input is a
 * source or a folder (its time changes when an entry is added or removed), a tsconfig, or
 * a package.json. A missing output is rebuilt with --force: tsc -b goes by its
 * tsconfig.tsbuildinfo and does not notice a deleted dist.
 *
 * usage: node scripts/run-built.mjs ENTRY.js [ARGS…]   (ENTRY sees ARGS as process.argv.slice(2))
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
/** The projects the entry points need, in build order. */
const PROJECTS = ["packages/ops", "packages/core"];
const stamp = join(root, "node_modules", ".cache", "wengert-run-built");

/** The newest modification time of a file or folder tree, in ms. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let t = stat.mtimeMs;
  for (const entry of readdirSync(path)) t = Math.max(t, newest(join(path, entry)));
  return t;
}

/** Whether an output is missing: tsc -b trusts its tsconfig.tsbuildinfo and would not rebuild it. */
function missing(target) {
  return !existsSync(target) || PROJECTS.some((p) => !existsSync(join(root, p, "dist", "index.js")));
}

function changed() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = PROJECTS.flatMap((p) => ["src", "tsconfig.json", "package.json"].map((f) => join(root, p, f)));
  return [...inputs, join(root, "tsconfig.base.json")].some((input) => newest(input) > built);
}

const [entry, ...args] = process.argv.slice(2);
if (entry === undefined) {
  console.error("usage: node scripts/run-built.mjs ENTRY.js [ARGS…]");
  process.exit(2);
}
const target = resolve(root, entry);
const force = missing(target);
if (force || changed()) {
  const started = new Date();
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  try {
    execFileSync(process.execPath, [tsc, "-b", ...(force ? ["--force"] : []), ...PROJECTS], { cwd: root, stdio: "inherit" });
  } catch {
    process.exit(1); // tsc has printed the errors
  }
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, "");
  utimesSync(stamp, started, started);
}
process.argv = [process.argv[0], target, ...args];
await import(pathToFileURL(target).href);
