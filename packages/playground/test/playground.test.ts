/**
 * The playground in a real browser: the site is built (build.mjs, as
 * `pnpm playground:build` builds it), served from 127.0.0.1 by a static server, and driven
 * in Debian's headless Chromium by puppeteer-core (over a pipe; it never downloads a
 * browser). Checked against the CLI run on the same files: each example's printed value,
 * trace and derivative terms (and its warnings); then a plot's points and three values
 * against closed forms, a tie marked, a syntax error under its line, the links between
 * `let`s and the source (mouse and keyboard), the TypeScript tab against Node, and
 * runaway programs stopped by the time limit. A screenshot is kept in
 * packages/playground/test-output/ (not committed).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { derivativeOf, grad, lt, mul, sin, traceOf, type Scalar } from "@wengert/core";
import { CHROMIUM, CHROMIUM_FLAGS, chromiumPresent, freshProfile, skipWithoutChromium } from "../../core/test/helpers/chromium.js";
import { buildSite, serve } from "../build.mjs";

const here = fileURLToPath(new URL("..", import.meta.url));
const root = join(here, "..", "..");
const CLI = join(root, "packages", "core", "dist", "cli", "main.js");
const skip = skipWithoutChromium("playground.test.ts");

/** `wengert ARGS` from the repository root, as a user runs it. */
function wengert(...args: string[]): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: "utf8" });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

const examples = readdirSync(join(root, "examples")).filter((f) => f.endsWith(".wg"));
const source = (file: string): string => readFileSync(join(root, file), "utf8");

describe.skipIf(skip)("the playground in headless Chromium", () => {
  let server: Server;
  let url: string;
  let browser: Browser;
  let page: Page;
  const profile = freshProfile();
  const errors: string[] = [];

  beforeAll(async () => {
    expect(chromiumPresent, `${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`).toBe(true);
    await buildSite({ outdir: join(here, "dist") });
    ({ server, url } = await serve(join(here, "dist"), 0));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      pipe: true,
      headless: true,
      // puppeteer's own headless flag stands for CHROMIUM_FLAGS' first
      args: CHROMIUM_FLAGS.filter((f) => f !== "--headless"),
      userDataDir: profile.dir,
    });
    page = await browser.newPage();
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.setViewport({ width: 1400, height: 1000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    profile.remove();
    // the page never threw
    expect(errors).toEqual([]);
  });

  /** Open the page at `hash` and wait until the language tab's run has finished. */
  async function open(hash: string): Promise<void> {
    // a new hash on the same page would be no navigation: leave it first, so the page starts again
    await page.goto("about:blank");
    await page.goto(`${url}${hash}`);
    await finished("status");
  }

  async function finished(id: string): Promise<string> {
    await page.waitForFunction((i) => /^(Done|Stopped|Not run)/.test(document.getElementById(i)?.textContent ?? ""), { timeout: 30_000 }, id);
    return page.$eval(`#${id}`, (e) => e.textContent ?? "");
  }

  /** What the page printed as the CLI's stdout (the rd terms, then `value : type`) and stderr. */
  const printed = (): Promise<{ stdout: string; stderr: string }> =>
    page.evaluate(() => ({
      stdout: [...document.querySelectorAll("#lang-output [data-cli]"), ...document.querySelectorAll("#result [data-cli]")].map((e) => e.textContent).join("\n") + "\n",
      stderr: [...document.querySelectorAll("#result [data-stderr]")].map((e) => `${e.textContent}\n`).join(""),
    }));

  it.each(examples)("examples/%s: the value, trace and derivative terms and warnings the CLI prints", async (name) => {
    const file = `examples/${name}`;
    const cli = wengert("run", file, "--trace", "--derivative");
    expect(cli.status).toBe(0);
    await open(`#src=${encodeURIComponent(source(file))}`);
    expect(await page.$eval("#example", (e) => (e as HTMLSelectElement).selectedOptions[0].textContent)).toBe(file);
    const got = await printed();
    expect(got.stdout).toBe(cli.stdout);
    expect(got.stderr).toBe(cli.stderr);
  });

  it("the example list: every examples/*.wg, the paper's nested examples first; picked by keyboard, run", async () => {
    await open("");
    const files = await page.$$eval("#example option", (os) => os.map((o) => o.textContent));
    const listed = files.filter((f) => f?.startsWith("examples/"));
    expect(listed.slice(0, 2)).toEqual(["examples/nested-1.wg", "examples/nested-2.wg"]);
    expect([...listed].sort()).toEqual(examples.map((e) => `examples/${e}`).sort());
    // the first example is shown and run on a plain load
    expect(await page.$eval("textarea", (t) => t.value)).toBe(source("examples/nested-1.wg"));
    expect((await printed()).stdout).toBe(wengert("run", "examples/nested-1.wg", "--trace", "--derivative").stdout);
    // keyboard: focus the list, the next option is nested-2, which runs
    await page.focus("#example");
    await page.keyboard.press("ArrowDown");
    await page.waitForFunction(() => document.querySelector("textarea")!.value.includes("letrec f"));
    await finished("status");
    expect((await printed()).stdout).toBe(wengert("run", "examples/nested-2.wg", "--trace", "--derivative").stdout);
  });

  it("a function of x: f, f′ and f″ plotted with the right number of points, values at three points, the point evaluated", async () => {
    const file = "packages/playground/examples/x-sin-x.wg";
    await open(`#src=${encodeURIComponent(source(file))}&x=1.5&from=-3&to=3&points=61`);
    const plot = await page.evaluate(() => ({
      curves: [...document.querySelectorAll("path.curve")].map((p) => [p.getAttribute("data-curve"), (p.getAttribute("d") ?? "").split(/[ML]/).filter(Boolean).length]),
      rows: [...document.querySelectorAll("table.values tbody tr")].map((r) => [...r.children].map((c) => c.textContent)),
      here: document.querySelector(".here title")?.textContent,
      fx: document.getElementById("fx")?.textContent,
    }));
    expect(plot.curves).toEqual([["f", 61], ["df", 61], ["d2f", 61]]);
    expect(plot.rows.length).toBe(61);
    expect(plot.here).toBe("x = 1.5");
    const f = (x: number) => x * Math.sin(x);
    const df = (x: number) => Math.sin(x) + x * Math.cos(x);
    const d2f = (x: number) => 2 * Math.cos(x) - x * Math.sin(x);
    for (const k of [0, 20, 45]) {
      const [x, ...values] = plot.rows[k].slice(0, 4).map(Number);
      expect(x).toBeCloseTo(-3 + 0.1 * k, 12);
      [f, df, d2f].forEach((g, j) => expect(Math.abs(values[j] - g(x)), `row ${k}, curve ${j}`).toBeLessThan(1e-12 * Math.max(1, Math.abs(g(x)))));
    }
    // f at x = 1.5, and its terms there: those the CLI prints for grad_{1.5}(x: real. f)
    const cli = wengert("eval", "grad_{1.5}(x: real. x * sin(x))", "--trace", "--derivative");
    const value = (out: string) => out.trim().split("\n").at(-1)!.replace(/ : real$/, "");
    const second = wengert("eval", "grad_{1.5}(x: real. grad_x(x: real. x * sin(x)))").stdout;
    expect(plot.fx).toBe(`f(1.5) = ${f(1.5)} : real;  f′(1.5) = ${value(cli.stdout)};  f″(1.5) = ${value(second)}`);
    const terms = await page.$$eval("#f-terms pre.term", (ps) => ps.map((p) => p.textContent!.split("\n").slice(1).join("\n")));
    const blocks = cli.stdout.split(/^# .*\n/m).slice(1).map((b) => b.trimEnd());
    expect(terms).toEqual([blocks[0], blocks[1].replace(/\n[^\n]*$/, "")]);
  });

  it("ties and kinks are marked on the plot, where the derivative is not defined", async () => {
    await open(`#src=${encodeURIComponent(source("packages/playground/examples/relu-tie.wg"))}&from=-2&to=2&points=41`);
    const marks = await page.$$eval(".mark", (ms) => ms.map((m) => [m.getAttribute("data-x"), m.querySelector("text")?.textContent, m.querySelector("title")?.textContent]));
    expect(marks).toEqual([["0", "tie", "x = 0: lt(0, 0) was decided at a tie"]]);
    await open(`#src=${encodeURIComponent(source("packages/playground/examples/abs-kink.wg"))}&from=-1&to=1&points=21`);
    const kinks = await page.$$eval(".mark text", (ts) => ts.map((t) => t.textContent));
    expect(kinks).toEqual(["kink"]);
  });

  it("a syntax error is shown under the line it points to, as the CLI's message", async () => {
    const program = "# a syntax error\nlet y = 2 in\n1.rd_1(x: real. x * y +)\n";
    const path = join(tmpdir(), `playground-error-${process.pid}.wg`);
    writeFileSync(path, program);
    const cli = wengert("run", path);
    expect(cli.status).toBe(1);
    await open(`#src=${encodeURIComponent(program)}`);
    const shown = await page.evaluate(() => ({
      problem: document.querySelector(".problem pre")?.textContent,
      gutter: document.querySelector(".gutter .bad")?.textContent,
      token: document.querySelector(".overlay .tok-error")?.textContent,
    }));
    const message = cli.stderr.trim().replace(path, "<playground>");
    expect(message).toBe('wengert: <playground>:3:24: expected a term, found ")"');
    expect(shown.problem).toBe(`3 | 1.rd_1(x: real. x * y +)\n  | ${" ".repeat(23)}^\n${message}`);
    expect(shown.gutter).toBe("3");
    expect(shown.token).toBe(")");
  });

  it("each let is linked to its source: hovering or focusing it lights up the token, a click moves the caret there, the caret lights up lets", async () => {
    await open(`#src=${encodeURIComponent("# f\nsin(x) * x")}&x=2`);
    // hover the trace term's mul: the `*` lights up
    const lets = await page.$$("#f-terms figure:first-of-type .let");
    const texts = await Promise.all(lets.map((l) => l.evaluate((e) => e.textContent)));
    expect(texts).toEqual(["let v1:real = sin(v0) in", "let v2:real = mul(v1, v0) in"]);
    await lets[1].hover();
    expect(await page.$$eval(".overlay .linked", (es) => es.map((e) => e.textContent))).toEqual(["*"]);
    expect(await page.$eval("#link", (e) => e.textContent)).toBe("This let came from mul at 2:8.");
    await lets[0].click();
    expect(await page.$eval("textarea", (t) => [t.selectionStart, t.selectionEnd, t.value.slice(t.selectionStart, t.selectionEnd)])).toEqual([4, 7, "sin"]);
    // the caret on sin lights up the lets it emitted: in the trace (and its copy in the derivative term), and
    // sin's reverse rule: cos(v0), its product with v2's cotangent v4, and that added to x's cotangent
    const linked = await page.$$eval("#f-terms .let.linked", (es) => es.map((e) => e.textContent));
    expect(linked).toEqual(["let v1:real = sin(v0) in", "let v1:real = sin(v0) in", "let v6:real = cos(v0) in", "let v7:real = mul(v4, v6) in", "let v8:real = v5 + v7 in"]);
    // keyboard (the mouse out of the way): arrows go from let to let, Enter goes to the source
    await page.mouse.move(0, 0);
    await page.focus("#f-terms pre.term");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("let v2:real = mul(v1, v0) in");
    expect(await page.$$eval(".overlay .linked", (es) => es.map((e) => e.textContent))).toEqual(["*"]);
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => [document.activeElement?.tagName, (document.activeElement as HTMLTextAreaElement).selectionStart])).toEqual(["TEXTAREA", 11]);
  });

  it("the TypeScript tab runs the API in a worker and prints what Node prints; a runaway loop is stopped and the page goes on", async () => {
    await open("");
    // keyboard: the tabs are one Tab stop; the right arrow selects the TypeScript tab
    await page.focus("#tab-lang");
    await page.keyboard.press("ArrowRight");
    expect(await page.evaluate(() => [document.activeElement?.id, document.getElementById("panel-ts")!.hidden, document.getElementById("panel-lang")!.hidden])).toEqual(["tab-ts", false, true]);
    await page.click("#ts-run");
    expect(await finished("ts-status")).toBe("Done.");
    const relu = (x: Scalar) => (lt(x, 0) ? 0 : x);
    const f = (x: Scalar) => mul(relu(sin(x)), x);
    const out = await page.$$eval("#ts-output pre", (ps) => ps.map((p) => p.textContent));
    expect(out).toEqual([String(grad(f, 2)), String(traceOf(f, 2)), String(derivativeOf(f, 2, 1))]);
    // a loop that never ends, typed in and run with Ctrl+Enter, under a 1 s limit
    await page.$eval("#limit", (e) => ((e as HTMLInputElement).value = "1"));
    await page.$eval("#ts-source", (e) => ((e as HTMLTextAreaElement).value = ""));
    await page.focus("#ts-source");
    await page.keyboard.type("let n: number = 0;\nwhile (true) n++;\n");
    const started = Date.now();
    await page.keyboard.down("Control");
    await page.keyboard.press("Enter");
    await page.keyboard.up("Control");
    expect(await finished("ts-status")).toMatch(/^Stopped after 1 s: the worker running it was terminated/);
    expect(Date.now() - started).toBeLessThan(10_000);
    // the page still works: a new worker runs the next program
    await page.$eval("#ts-source", (e) => ((e as HTMLTextAreaElement).value = 'import { grad, sin } from "@wengert/core";\nconsole.log(grad(sin, 0));'));
    await page.click("#ts-run");
    expect(await finished("ts-status")).toBe("Done.");
    expect(await page.$$eval("#ts-output pre", (ps) => ps.map((p) => p.textContent))).toEqual(["1"]);
  });

  it("a runaway program of the language is stopped at the time limit", async () => {
    await open(`#src=${encodeURIComponent("letrec f(x: real): real = f(x) in f(1)")}`);
    // (the first run, at 5 s, may end at the step limit: the CLI's error)
    await page.$eval("#limit", (e) => ((e as HTMLInputElement).value = "0.5"));
    await page.click("#run");
    expect(await finished("status")).toMatch(/^Stopped after 0.5 s: the worker running it was terminated/);
    await page.$eval("#limit", (e) => ((e as HTMLInputElement).value = "5"));
  });

  it("screenshot of the page (packages/playground/test-output/playground.png)", async () => {
    await open(`#src=${encodeURIComponent(source("packages/playground/examples/x-sin-x.wg"))}`);
    mkdirSync(join(here, "test-output"), { recursive: true });
    const png = await page.screenshot({ path: join(here, "test-output", "playground.png"), fullPage: true });
    expect(png.length).toBeGreaterThan(10_000);
  });
});
