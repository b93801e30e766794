/**
 * @wengert/core in a real browser: a page script (browser/page.ts) importing the
 * package is bundled by esbuild as an ES module and as an IIFE, each served from a
 * local server and run by headless Chromium (Debian's, at /usr/bin/chromium; .ci/run
 * installs it), and what it computes (browser/compute.ts) must be Node's numbers to
 * 1e-12 relative (the engines' own Math functions may differ in the last bit): a
 * gradient, a third derivative, a tensor MLP's gradient whose products ran in the
 * WebAssembly SIMD gemm (its calls counted), a compileGrad that replayed compiled code,
 * and a ShapeError naming the page's own line in the bundle. The bundles are built
 * from the packages' dist/, as a user's bundler would find them, with no warning.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Format } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compute, type Results } from "./browser/compute.js";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const PAGE = fileURLToPath(new URL("browser/page.ts", import.meta.url));

// In CI a missing browser fails the test; elsewhere it is skipped, saying why.
const present = existsSync(CHROMIUM);
const skip = !present && !process.env.CI;
if (skip) console.warn(`browser.test.ts skipped: ${CHROMIUM} is missing (apt-get install chromium, as .ci/run does)`);

/** The page: <pre id="out"> for the results, and the bundle as a module or a classic script. */
function html(format: Format): string {
  const fail = `document.getElementById('out').textContent = encodeURIComponent(JSON.stringify({ ok: false, error: String(arguments[0] && (arguments[0].error || arguments[0].type)) }))`;
  const script = format === "esm" ? `<script type="module" src="/esm.js" onerror="${fail}"></script>` : `<script src="/iife.js" onerror="${fail}"></script>`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>wengert</title></head>
<body><pre id="out">pending</pre>
<script>window.addEventListener("error", function () { ${fail} });</script>
${script}
</body></html>
`;
}

/** Run `chromium --dump-dom` on url and read what the page wrote. */
function runPage(url: string): Promise<{ ok: boolean; results?: Results; error?: string }> {
  const profile = mkdtempSync(join(tmpdir(), "wengert-chromium-"));
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, "--dump-dom", url], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let [stdout, stderr] = ["", ""];
    child.stdout.on("data", (b: Buffer) => (stdout += b));
    child.stderr.on("data", (b: Buffer) => (stderr += b));
    // the browser and its helpers are one process group: all of it goes on a timeout
    const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      const m = /<pre id="out">([^<]*)<\/pre>/.exec(stdout);
      if (m === null || m[1] === "pending") {
        reject(new Error(`chromium (exit ${code}) gave no results for ${url}:\n${stdout.slice(0, 2000)}\n${stderr.slice(-2000)}`));
      } else resolve(JSON.parse(decodeURIComponent(m[1])));
    });
  });
}

/** a and b agree to 1e-12, relative to the largest magnitude among b's numbers. */
function expectClose(a: number[], b: number[], what: string): void {
  expect(a.length, what).toBe(b.length);
  const scale = Math.max(...b.map(Math.abs));
  a.forEach((x, i) => expect(Math.abs(x - b[i]), `${what}[${i}]: ${x} vs ${b[i]}`).toBeLessThanOrEqual(1e-12 * scale));
}

describe.skipIf(skip)("in headless Chromium", () => {
  let server: Server;
  let origin: string;
  const bundles = new Map<string, string>();
  let node: Results;

  beforeAll(async () => {
    expect(present, `${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`).toBe(true);
    for (const format of ["esm", "iife"] as const) {
      const r = await build({ entryPoints: [PAGE], bundle: true, format, platform: "browser", target: "es2022", write: false, logLevel: "silent" });
      // no warning: an IIFE would warn of an import.meta left empty, for one
      expect(r.warnings.map((w) => w.text)).toEqual([]);
      bundles.set(`/${format}.js`, r.outputFiles[0].text);
      bundles.set(`/${format}.html`, html(format));
    }
    server = createServer((req, res) => {
      const body = bundles.get(req.url ?? "");
      res.writeHead(body === undefined ? 404 : 200, { "content-type": req.url?.endsWith(".html") ? "text/html" : "text/javascript" });
      res.end(body ?? "not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    node = compute();
  }, 120_000);

  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("Node itself takes the SIMD gemm and replays compiled code (what the page is compared with)", () => {
    expect(node.wasmCalls.gemm).toBe(2);
    expect(node.stats.compiled).toBeGreaterThan(0);
  });

  it.each(["esm", "iife"])("the %s bundle gives Node's numbers", async (format) => {
    const page = await runPage(`${origin}/${format}.html`);
    expect(page.error).toBeUndefined();
    const r = page.results!;
    expectClose(r.gradient, node.gradient, "gradient");
    expectClose([r.third], [node.third], "third derivative");
    for (const k of ["W1", "b1", "W2"] as const) expectClose(r.mlp[k], node.mlp[k], `MLP gradient ${k}`);
    // the MLP's large products ran in wasm, X·W1 and, in the reverse sweep, Xᵀ·δ; the other kernels as in Node
    expect(r.wasmCalls.gemm, JSON.stringify(r.wasmCalls)).toBe(2);
    expect(r.wasmCalls).toEqual(node.wasmCalls);
    r.replays.forEach((g, i) => expectClose(g, node.replays[i], `compileGrad call ${i + 1}`));
    expect(r.stats).toEqual(node.stats);
    expect(r.stats.compiled).toBeGreaterThan(0);
    // the call site is the page's own line, in the bundle
    expect(r.shapeError.place.startsWith(`${origin}/${format}.js:`), r.shapeError.place).toBe(true);
    expect(r.shapeError.message).toContain(`, at ${r.shapeError.place}`);
    expect(node.shapeError.message).toContain(`, at ${node.shapeError.place}`);
  });
});
