/**
 * @wengert/core in a real browser: a page script (browser/page.ts) importing the
 * package is bundled by esbuild as an ES module and as an IIFE, each served from a
 * local server and run by headless Chromium (Debian's, at /usr/bin/chromium; .ci/run
 * installs it), and what it computes (browser/compute.ts) must be Node's numbers to
 * 1e-12 relative (the engines' own Math functions may differ in the last bit): a
 * gradient, a third derivative, a tensor MLP's gradient whose products ran in the
 * WebAssembly SIMD gemm (its calls counted), a compileGrad that replayed compiled code,
 * and a ShapeError naming the page's own line in the bundle. Under a strict
 * Content-Security-Policy (no new Function) compileGrad's interpreted replay gives the
 * same numbers (reals only: ndarray needs new Function). The bundles are built from the packages' dist/, as a user's bundler would
 * find them, with no warning.
 */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import { build, type Format } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeReals, computeTensors, type Results, type TensorResults } from "../browser/compute.js";
import { CHROMIUM, CHROMIUM_FLAGS, chromiumPresent, freshProfile, skipWithoutChromium } from "../helpers/chromium.js";

const PAGE = fileURLToPath(new URL("../browser/page.ts", import.meta.url));
const skip = skipWithoutChromium("browser.test.ts");

/** The page: <pre id="out"> for the results, and the bundle as a module or a classic script. */
function html(format: Format): string {
  const fail =
    "document.getElementById('out').textContent = " +
    "encodeURIComponent(JSON.stringify({ ok: false, error: String(arguments[0] && (arguments[0].error || arguments[0].type)) }))";
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
  const profile = freshProfile();
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM, [...CHROMIUM_FLAGS, `--user-data-dir=${profile.dir}`, "--dump-dom", url], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let [stdout, stderr] = ["", ""];
    child.stdout.on("data", (b: Buffer) => (stdout += b));
    child.stderr.on("data", (b: Buffer) => (stderr += b));
    // the browser and its helpers are one process group: all of it goes on a timeout
    const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      profile.remove();
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
  let node: { reals: Results["reals"]; tensors: TensorResults };

  beforeAll(async () => {
    expect(chromiumPresent, `${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`).toBe(true);
    for (const format of ["esm", "iife"] as const) {
      const r = await build({ entryPoints: [PAGE], bundle: true, format, platform: "browser", target: "es2022", write: false, logLevel: "silent" });
      // no warning: an IIFE would warn of an import.meta left empty, for one
      expect(r.warnings.map((w) => w.text)).toEqual([]);
      bundles.set(`/${format}.js`, r.outputFiles[0].text);
      bundles.set(`/${format}.html`, html(format));
    }
    bundles.set("/csp.html", html("esm"));
    server = createServer((req, res) => {
      const path = (req.url ?? "").replace(/\?.*$/, "");
      const body = bundles.get(path);
      const headers: Record<string, string> = { "content-type": path.endsWith(".html") ? "text/html" : "text/javascript" };
      // a strict policy: no code made at run time (new Function), no WebAssembly, no inline script
      if (path === "/csp.html") headers["content-security-policy"] = "script-src 'self'";
      res.writeHead(body === undefined ? 404 : 200, headers);
      res.end(body ?? "not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    node = { reals: computeReals(), tensors: computeTensors() };
  }, 120_000);

  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("Node itself takes the SIMD gemm and replays compiled code (what the page is compared with)", () => {
    expect(node.tensors.wasmCalls.gemm).toBe(2);
    expect(node.reals.stats.compiled).toBeGreaterThan(0);
    expect(node.reals.jitted.jitStats.compiled).toBeGreaterThan(0);
  });

  /** The page's results, whose numbers must be Node's. */
  async function sameNumbers(url: string): Promise<Results> {
    const page = await runPage(url);
    expect(page.error).toBeUndefined();
    const { reals, tensors } = page.results!;
    expectClose(reals.gradient, node.reals.gradient, "gradient");
    expectClose([reals.third], [node.reals.third], "third derivative");
    reals.replays.forEach((g, i) => expectClose(g, node.reals.replays[i], `compileGrad call ${i + 1}`));
    const [j, nj] = [reals.jitted, node.reals.jitted];
    j.hvps.forEach((g, i) => expectClose(g, nj.hvps[i], `jit(hvp) call ${i + 1}`));
    j.hessians.forEach((H, i) => expectClose(H.flat(), nj.hessians[i].flat(), `jit(hessian) call ${i + 1}`));
    expectClose(j.perExample, nj.perExample, "vmap(grad)");
    expectClose([j.scanned], [nj.scanned], "grad of a scan");
    for (const k of ["W1", "b1", "W2"] as const) if (tensors) expectClose(tensors.mlp[k], node.tensors.mlp[k], `MLP gradient ${k}`);
    return page.results!;
  }

  it.each(["esm", "iife"])("the %s bundle gives Node's numbers", async (format) => {
    const { reals, tensors } = await sameNumbers(`${origin}/${format}.html`);
    expect(tensors).toBeDefined();
    const t = tensors!;
    // the MLP's large products ran in wasm, X·W1 and, in the reverse sweep, Xᵀ·δ; the other kernels as in Node
    expect(t.wasmCalls.gemm, JSON.stringify(t.wasmCalls)).toBe(2);
    expect(t.wasmCalls).toEqual(node.tensors.wasmCalls);
    expect(reals.stats).toEqual(node.reals.stats);
    expect(reals.stats.compiled).toBeGreaterThan(0);
    // the call site is the page's own line, in the bundle
    expect(t.shapeError.place.startsWith(`${origin}/${format}.js:`), t.shapeError.place).toBe(true);
    expect(t.shapeError.message).toContain(`, at ${t.shapeError.place}`);
    expect(node.tensors.shapeError.message).toContain(`, at ${node.tensors.shapeError.place}`);
  });

  it("under a Content-Security-Policy forbidding code made at run time: compileGrad and jit replay by their interpreters, vmap, hessian and scan run, with the same numbers", async () => {
    // reals only: ndarray, which tensors come in, compiles its constructors with new Function
    const { reals, tensors } = await sameNumbers(`${origin}/csp.html?reals`);
    expect(tensors).toBeUndefined();
    expect(reals.stats).toEqual({ ...node.reals.stats, compiled: 0 });
    // jit, vmap, hessian and scan take their paths without code made at run time: the same numbers, nothing compiled
    expect(reals.jitted.jitStats.compiled).toBe(0);
  });
});
