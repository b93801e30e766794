#!/usr/bin/env node
/**
 * @file Builds the playground into a static folder (dist/ by default): index.html,
 * style.css, main.js (the page) and worker.js (wengert, the language, Sucrase), bundled
 * by esbuild from the built @wengert/core, with the example programs inlined. No server
 * code: any static server serves it. `--serve` also serves it on 127.0.0.1 and prints
 * the URL (`pnpm playground`); `--port N` picks the port (default 8025, 0: any free one).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = fileURLToPath(new URL(".", import.meta.url));
const root = join(here, "..", "..");

/** examples/*.wg (the paper's nested examples first), then the playground's functions of x. */
export function examples() {
  const read = (dir, group, first) =>
    readdirSync(dir)
      .filter((f) => f.endsWith(".wg"))
      .sort((a, b) => (first.indexOf(b) - first.indexOf(a)) || a.localeCompare(b))
      .map((f) => ({ file: relative(root, join(dir, f)).split(sep).join("/"), source: readFileSync(join(dir, f), "utf8"), group }));
  return [
    ...read(join(root, "examples"), "The paper's examples (examples/)", ["nested-2.wg", "nested-1.wg"]),
    ...read(join(here, "examples"), "Functions of x (plotted)", ["x-sin-x.wg"]),
  ];
}

const inlineExamples = {
  name: "examples",
  setup(b) {
    b.onResolve({ filter: /^virtual:examples$/ }, () => ({ path: "examples", namespace: "examples" }));
    b.onLoad({ filter: /.*/, namespace: "examples" }, () => ({ contents: `export default ${JSON.stringify(examples())};`, loader: "js" }));
  },
};

/** Build the site into `outdir`; returns the bundles' sizes in bytes. */
export async function buildSite({ outdir = join(here, "dist"), minify = true } = {}) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { main: join(here, "src", "main.ts"), worker: join(here, "src", "worker.ts") },
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify,
    sourcemap: true,
    outdir,
    plugins: [inlineExamples],
    logLevel: "warning",
    metafile: true,
  });
  for (const f of readdirSync(join(here, "public"))) copyFileSync(join(here, "public", f), join(outdir, f));
  return Object.fromEntries(Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith(".js")).map(([f, o]) => [relative(outdir, f), o.bytes]));
}

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".map": "application/json", ".png": "image/png", ".svg": "image/svg+xml" };

/** Serve `dir` on 127.0.0.1 (a static server, as GitHub Pages would); resolves to the server and its URL. */
export function serve(dir, port = 0) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = normalize(join(dir, path.endsWith("/") ? `${path}index.html` : path));
    let body;
    try {
      if (!file.startsWith(dir)) throw new Error("outside");
      body = readFileSync(file);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("not found");
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(body);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === normalize(process.argv[1])) {
  const args = process.argv.slice(2);
  const outdir = join(here, "dist");
  const sizes = await buildSite({ outdir });
  console.log(`built ${relative(process.cwd(), outdir) || "."}: ${Object.entries(sizes).map(([f, n]) => `${f} ${(n / 1024).toFixed(0)} kB`).join(", ")}`);
  if (args.includes("--serve")) {
    const p = args.indexOf("--port");
    const { url } = await serve(outdir, p >= 0 ? Number(args[p + 1]) : 8025);
    console.log(`the playground is at ${url} (Ctrl+C stops it)`);
  }
}
