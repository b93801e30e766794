/**
 * @file `pnpm bench:optim`: every method of `minimize` on the test problems of
 * problems.ts, beside SciPy's `minimize` with the same method, from the same starting
 * points, given exact derivatives (scipy_minimize.py, run by /usr/bin/python3 where
 * Debian's python3-scipy is installed; its columns are left out with a note where not).
 * Prints two Markdown tables: iterations and evaluations per problem and method, and the
 * time to ‖∇f‖ < 1e-8 on Rosenbrock n = 100 (medians of `--repeat` runs, default 5;
 * SciPy's time measured by SciPy in the same run).
 */
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { compileGrad } from "@wengert/core";
import { ravelTree, type Method, type MinimizeOptions, type Tree } from "@wengert/optim";
import { rosen, rosenbrock, testProblems, type TestProblem } from "./problems.js";

interface MethodSpec {
  readonly method: Method;
  readonly scipy: string;
  /** Stopping rules, the same on both sides: ‖∇f‖ ≤ 1e-8 where the method has one, else a step of 1e-12 (Newton-CG). */
  readonly ours: MinimizeOptions<Tree>;
  readonly theirs: Record<string, number>;
}

const METHODS: readonly MethodSpec[] = [
  { method: "lbfgs", scipy: "L-BFGS-B", ours: { gtol: 1e-8, ftol: 0 }, theirs: { gtol: 1e-8, ftol: 0 } },
  { method: "bfgs", scipy: "BFGS", ours: { gtol: 1e-8 }, theirs: { gtol: 1e-8 } },
  { method: "newton-cg", scipy: "Newton-CG", ours: { xtol: 1e-12 }, theirs: { xtol: 1e-12 } },
  { method: "trust-exact", scipy: "trust-exact", ours: { gtol: 1e-8 }, theirs: { gtol: 1e-8 } },
];

interface Row {
  readonly problem: string;
  readonly method: string;
  readonly nit: number;
  readonly nfev: number;
  readonly nhev: number;
  readonly gnorm: number;
  readonly fun: number;
  readonly success: boolean;
  /** Why it stopped: ours by name, SciPy's by its message. */
  readonly status?: string;
  readonly message?: string;
  /** SciPy's median time (ours are taken apart, by timeOurs). */
  readonly ms?: number;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function ours(problem: TestProblem, spec: MethodSpec): Row {
  const r = problem.minimize({ method: spec.method, ...spec.ours });
  const g = projectedGradient(ravelTree(r.x).vector, ravelTree(r.jac).vector, problem.bounds);
  return {
    problem: problem.name,
    method: spec.method,
    nit: r.nit,
    nfev: r.nfev,
    nhev: r.nhev,
    gnorm: g.reduce((a, v) => Math.max(a, Math.abs(v)), 0),
    fun: r.fun,
    success: r.success,
    status: r.status,
  };
}

/**
 * Each method's median time on `problem` over `repeat` rounds, the methods taken in turn
 * within a round (so that a busy moment of the machine falls on all of them), after
 * `warmup` untimed rounds: V8 compiles the minimizers' loops and core's while they run.
 */
function timeOurs(problem: TestProblem, specs: readonly MethodSpec[], repeat: number, warmup = 3): Map<Method, number> {
  const run = (spec: MethodSpec) => problem.minimize({ method: spec.method, ...spec.ours });
  for (let w = 0; w < warmup; w++) specs.forEach(run);
  const times = new Map<Method, number[]>(specs.map((spec) => [spec.method, []]));
  for (let k = 0; k < repeat; k++) {
    for (const spec of specs) {
      const start = performance.now();
      run(spec);
      times.get(spec.method)!.push(performance.now() - start);
    }
  }
  return new Map([...times].map(([method, ts]) => [method, median(ts)]));
}

/** P(x − g) − x: the gradient where no bound holds x, zero at a first-order point. */
function projectedGradient(x: Float64Array, g: Float64Array, bounds: TestProblem["bounds"]): Float64Array {
  return bounds ? x.map((v, i) => Math.min(Math.max(v - g[i], bounds.lower), bounds.upper) - v) : g;
}

interface ScipyOutput {
  readonly version: string;
  readonly results: Row[];
}

/** SciPy's rows, or why there are none. */
function scipy(runs: { problem: TestProblem; spec: MethodSpec; repeat: number }[]): ScipyOutput | string {
  const python = "/usr/bin/python3";
  const script = fileURLToPath(new URL("../../scipy_minimize.py", import.meta.url));
  const request = {
    runs: runs.map(({ problem, spec, repeat }) => ({
      problem: problem.name,
      kind: problem.scipy.kind,
      x0: problem.scipy.x0,
      data: problem.scipy.data,
      bounds: problem.bounds,
      method: spec.scipy,
      options: spec.theirs,
      repeat,
    })),
  };
  const out = spawnSync(python, [script], { input: JSON.stringify(request), encoding: "utf8", maxBuffer: 1 << 26 });
  if (out.error) return `SciPy not run: ${python} could not be started (${out.error.message}); install Debian's python3-scipy.`;
  if (out.status !== 0) {
    const missing = /No module named '?(numpy|scipy)/.exec(out.stderr);
    return missing ? `SciPy not run: ${missing[1]} is not installed (apt-get install -y python3-scipy).` : `SciPy failed: ${out.stderr.trim()}`;
  }
  return JSON.parse(out.stdout) as ScipyOutput;
}

const fmt = (v: number) => (v === 0 ? "0" : v.toExponential(1));
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(v >= 10 ? 1 : 2));

function main(): void {
  const repeatArg = process.argv.indexOf("--repeat");
  const repeat = repeatArg >= 0 ? Number(process.argv[repeatArg + 1]) : 5;
  const problems = testProblems();
  const timed = rosenbrock(100).name;
  const runs = problems.flatMap((problem) =>
    METHODS.filter((spec) => !problem.bounds || spec.method === "lbfgs").map((spec) => ({ problem, spec, repeat: problem.name === timed ? repeat : 1 })),
  );
  const mine = runs.map(({ problem, spec }) => ours(problem, spec));
  const timedProblem = problems.find((p) => p.name === timed)!;
  const myTimes = timeOurs(timedProblem, METHODS, repeat);
  const theirs = scipy(runs);
  const find = (problem: string, method: string): Row | undefined =>
    typeof theirs === "string" ? undefined : theirs.results.find((r) => r.problem === problem && r.method === method);

  console.log(`# @wengert/optim beside SciPy — ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`);
  console.log(`Node ${process.version}, ${cpus()[0]?.model ?? "unknown CPU"}; ${typeof theirs === "string" ? theirs : `SciPy ${theirs.version}`}\n`);
  console.log("Stopping: ‖∇f‖∞ ≤ 1e-8 (lbfgs with ftol = 0, bfgs), ‖∇f‖₂ < 1e-8 (trust-exact), a step of ℓ1 norm ≤ n·1e-12 (newton-cg), on both sides.");
  console.log("nit / nfev / nhev: iterations, evaluations of f (with its gradient), Hessian-vector products or Hessians;");
  console.log("‖∇f‖∞ at the end (in a box, of the projected gradient P(x − ∇f) − x); where a run did not succeed, why.\n");
  console.log("| problem | method | wengert nit / nfev / nhev | SciPy nit / nfev / nhev | wengert ‖∇f‖∞ | SciPy ‖∇f‖∞ |");
  console.log("|---|---|--:|--:|--:|--:|");
  runs.forEach(({ problem, spec }, i) => {
    const a = mine[i];
    const b = find(problem.name, spec.scipy);
    const counts = (r: Row) => `${r.nit} / ${r.nfev} / ${r.nhev}${r.success ? "" : ` (${r.status ?? r.message})`}`;
    console.log(`| ${problem.name} | ${spec.method} | ${counts(a)} | ${b ? counts(b) : "—"} | ${fmt(a.gnorm)} | ${b ? fmt(b.gnorm) : "—"} |`);
  });
  console.log(`\nTime to ‖∇f‖ < 1e-8 on ${timed} (median of ${repeat} runs each, wengert's after three untimed; SciPy's own time, in this run):\n`);
  console.log("| method | wengert | SciPy | wengert / SciPy |");
  console.log("|---|--:|--:|--:|");
  for (const spec of METHODS) {
    const a = myTimes.get(spec.method)!;
    const b = find(timed, spec.scipy);
    const theirMs = b?.ms;
    console.log(`| ${spec.method} (SciPy ${spec.scipy}) | ${ms(a)} ms | ${theirMs ? `${ms(theirMs)} ms` : "—"} | ${theirMs ? (a / theirMs).toFixed(2) : "—"} |`);
  }
  const { first, later } = gradientCost(rosenbrock(100).scipy.x0 as number[]);
  console.log(
    `\nwengert's times include making f's gradient: each minimize call makes one compileGrad(f), whose calls until its ` +
      `trace runs compiled (trace, two replays, compiling to JavaScript) took ${ms(first)} ms here, and each call after ${(later * 1e3).toFixed(1)} µs.`,
  );
}

/** compileGrad(rosen) at n = 100: the calls until it runs compiled, together, and the median of later ones. */
function gradientCost(x0: number[]): { first: number; later: number } {
  const firsts: number[] = [];
  const laters: number[] = [];
  for (let k = 0; k < 5; k++) {
    const g = compileGrad(rosen);
    let start = performance.now();
    for (let i = 0; g.stats.compiled === 0; i++) g(x0.map((v) => v + i * 1e-3));
    firsts.push(performance.now() - start);
    start = performance.now();
    for (let i = 0; i < 1000; i++) g(x0);
    laters.push((performance.now() - start) / 1000);
  }
  return { first: median(firsts), later: median(laters) };
}

main();
