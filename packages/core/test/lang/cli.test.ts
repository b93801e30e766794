/**
 * The built command-line tool `wengert` (dist/cli/main.js), run as a child process:
 * output, exit codes (0 success, 1 an error in the program, 2 a usage error) and
 * one-line error messages without stack traces.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
let dir = "";

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "packages/ops", "packages/core"], { cwd: repoRoot, stdio: "pipe" });
  dir = mkdtempSync(join(tmpdir(), "wengert-cli-"));
}, 180_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}
/** Run the CLI from the repository root (so that examples/… paths work). */
function wengert(...args: string[]): Run {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** Write a program to a temporary file and return its path. */
function program(name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}
/** Exactly one line on stderr, `wengert: …`, with no stack frames. */
function expectOneLineError(r: Run): string {
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^wengert: /);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

describe("wengert run / eval / check", () => {
  it("run examples/nested-1.wg prints 1 : real", () => {
    const r = wengert("run", "examples/nested-1.wg");
    expect(r).toEqual({ status: 0, stdout: "1 : real\n", stderr: "" });
  });

  it("eval '<1, 2>' prints the pair and its type", () => {
    expect(wengert("eval", "<1, 2>")).toEqual({ status: 0, stdout: "<1, 2> : real * real\n", stderr: "" });
  });

  it("eval prints unit, nested pairs and reals", () => {
    expect(wengert("eval", "<*, <1.5, grad_2(x. x * x)>>").stdout).toBe("<*, <1.5, 4>> : unit * (real * real)\n");
  });

  it("check FILE prints the type without running the program", () => {
    const diverges = program("diverges.wg", "letrec f(x: real): real = f(x) in <f(1), 2>\n");
    const r = wengert("check", diverges);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${diverges}: well typed, of type real * real\n`);
    expect(wengert("check", "examples/nested-2.wg").stdout).toBe("examples/nested-2.wg: well typed, of type real\n");
  });

  it("run with a tie prints the value and warns on stderr", () => {
    const r = wengert("run", "examples/relu.wg");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("<<0, 1>, 1> : real * real * real\n");
    expect(r.stderr).toMatch(/^wengert: rd at examples\/relu\.wg:\d+:\d+: lt\(0, 0\) was decided at a tie/);
  });

  it("--trace prints the trace term of each outermost rd, then the value", () => {
    const r = wengert("run", "examples/forward.wg", "--trace");
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^# trace term of the rd at examples\/forward\.wg:\d+:\d+$/);
    expect(lines).toContain("x : real × real.");
    expect(lines.some((l) => /^let v\d+:real = /.test(l))).toBe(true);
    expect(r.stdout).not.toContain("# derivative term");
    expect(lines.at(-1)).toMatch(/^<3, -0\.41614683654714\d*> : real \* real$/);
  });

  it("--derivative prints the derivative term with the parameters x and W", () => {
    const r = wengert("run", "examples/nested-1.wg", "--derivative");
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^# derivative term of the rd at examples\/nested-1\.wg:\d+:\d+$/);
    expect(lines).toContain("x : real.");
    expect(lines).toContain("W : real.");
    expect(lines.some((l) => /^let v\d+:real = /.test(l))).toBe(true);
    expect(r.stdout).not.toContain("# trace term");
    expect(lines.at(-1)).toBe("1 : real");
  });

  it("--trace and --derivative together print both, once per outermost rd", () => {
    const r = wengert("eval", "<grad_1(x. x * x), grad_2(x. sin(x))>", "--trace", "--derivative");
    expect(r.status).toBe(0);
    expect(r.stdout.match(/^# trace term of the rd at <eval>:1:\d+$/gm)).toHaveLength(2);
    expect(r.stdout.match(/^# derivative term of the rd at <eval>:1:\d+$/gm)).toHaveLength(2);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toMatch(/^<2, -0\.41614683654714\d*> : real \* real$/);
  });
});

describe("errors in the program: one line, exit 1", () => {
  it("a syntax error gives FILE:LINE:COL and no stack trace", () => {
    const file = program("syntax.wg", "let x = 1 in\n  x + )\n");
    const r = wengert("run", file);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(expectOneLineError(r)).toMatch(new RegExp(`^wengert: ${file.replace(/[.\\]/g, "\\$&")}:2:7: .*"\\)"`));
  });

  it("a type error gives FILE:LINE:COL: type error and no stack trace", () => {
    const file = program("type.wg", "let x = 1 in\n  x + <1, 2>\n");
    for (const cmd of ["run", "check"]) {
      const r = wengert(cmd, file);
      expect(r.status).toBe(1);
      expect(expectOneLineError(r)).toBe(`wengert: ${file}:2:7: type error: the right operand of + has type real * real, expected real`);
    }
  });

  it("eval reports errors at <eval>:LINE:COL", () => {
    const r = wengert("eval", "1 + fst(2)");
    expect(r.status).toBe(1);
    expect(expectOneLineError(r)).toBe("wengert: <eval>:1:9: type error: fst needs a pair, got a value of type real");
  });

  it("--max-steps 1000 stops a divergent program", () => {
    const file = program("loop.wg", "letrec f(x: real): real = f(x) in f(1)\n");
    const r = wengert("run", file, "--max-steps", "1000");
    expect(r.status).toBe(1);
    expect(expectOneLineError(r)).toMatch(new RegExp(`^wengert: ${file.replace(/[.\\]/g, "\\$&")}:1:\\d+: evaluation did not finish within 1000 steps`));
  });

  it("a tail call takes constant memory: 3·10⁶ iterations in a 64 MB heap", () => {
    // every generator that made a tail call was kept alive until the loop ended (about 2 GB at 10⁶)
    const file = program("count.wg", "letrec count(n: real): real = if n = 0 then 0 else count(n - 1) in count(3000000)\n");
    const r = spawnSync(process.execPath, ["--max-old-space-size=64", cli, "run", file, "--max-steps", "100000000"], { encoding: "utf8", timeout: 120_000 });
    expect([r.status, r.stdout]).toEqual([0, "0 : real\n"]);
  }, 120_000);

  it("--ties error on examples/relu.wg stops at the tie, and names the predicate x < 0 (4:33), not its operand 0", () => {
    const r = wengert("run", "examples/relu.wg", "--ties", "error");
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(expectOneLineError(r)).toMatch(/^wengert: examples\/relu\.wg:4:33: .*lt\(0, 0\) was decided at a tie/);
  });

  it("--ties ignore says nothing", () => {
    expect(wengert("run", "examples/relu.wg", "--ties", "ignore")).toEqual({ status: 0, stdout: "<<0, 1>, 1> : real * real * real\n", stderr: "" });
  });
});

describe("usage errors: exit 2", () => {
  it("an unknown command prints the usage", () => {
    const r = wengert("frobnicate", "examples/nested-1.wg");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^wengert: unknown command frobnicate\n/);
    expect(r.stderr).toContain("usage:");
    expect(r.stderr).toContain("wengert run FILE");
  });

  it("an unknown option names it", () => {
    const r = wengert("run", "examples/nested-1.wg", "--frob");
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^wengert: unknown option --frob/);
  });

  it("a missing file names it", () => {
    const missing = join(dir, "no-such-file.wg");
    const r = wengert("run", missing);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^wengert: cannot read ${missing.replace(/[.\\]/g, "\\$&")}`));
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it.each([
    [["run"], /run takes exactly one file/],
    [["eval", "1", "2"], /eval takes exactly one term/],
    [["run", "examples/nested-1.wg", "--max-steps", "-3"], /--max-steps needs a positive integer, got -3/],
    [["run", "examples/nested-1.wg", "--max-steps"], /--max-steps needs a positive integer, got nothing/],
    [["run", "examples/nested-1.wg", "--ties", "maybe"], /--ties needs one of warn, error, ignore, got maybe/],
  ])("wengert %j", (args, message) => {
    const r = wengert(...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("no arguments prints the usage and exits 2", () => {
    const r = wengert();
    expect(r.status).toBe(2);
    expect(r.stdout + r.stderr).toContain("usage:");
  });

  it("--help prints the usage and exits 0", () => {
    const r = wengert("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage:/);
    for (const word of ["run FILE", "eval 'TERM'", "check FILE", "--trace", "--derivative", "--max-steps N", "--ties MODE"]) {
      expect(r.stdout).toContain(word);
    }
  });
});
