/**
 * @file `pnpm bench -- --ops`: what one tensor operation costs at sizes 1, 14, 256 and 10⁴,
 * outside a trace, recorded in one, differentiated (`grad`: trace, reverse sweep,
 * evaluation) and replayed (`compileGrad`), each against a plain loop over Float64Arrays
 * doing the same arithmetic in the same run. At size 1 nearly all of it is the fixed cost
 * per operation (dispatch, shapes, buffers, the tape); at 10⁴ the arithmetic. GradBench's
 * evals at their small sizes (lstm's b = 14, ht's 4×4 transforms, ba's per-observation
 * vectors) pay the fixed cost thousands of times per call.
 *
 * Each case is a chain of {@link CHAIN} operations on one tensor (so every operation
 * depends on the one before, as in a model); times are per operation: the median of
 * batches of calls, over at least `minSeconds` per cell.
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { add, compileGrad, grad, sin, sum, vjp, type Scalar, type Tensor, type TensorArg } from "@wengert/core";
import { formatMs, formatRatio } from "./report/format.js";

export const OP_SIZES = [1, 14, 256, 10_000] as const;

/** Operations per call: enough that the call's own cost (argument handling, the trace's setup) is spread thin. */
export const CHAIN = 32;

export interface OpCase {
  readonly name: string;
  readonly what: string;
  /** The chain on plain Float64Arrays, into two buffers made beforehand: the arithmetic alone, the floor (its value is `wengert`'s). */
  readonly plain: (x: Float64Array, buffers: readonly [Float64Array, Float64Array]) => number;
  /** The chain with wengert's operations; returns a real (summed) so that `grad` applies. */
  readonly wengert: (x: TensorArg) => Scalar;
}

const total = (y: Float64Array): number => y.reduce((a, b) => a + b, 0);

/**
 * The cases measured: an elementwise binary and unary operation and a reduction. Each plain
 * loop is written out (not one helper taking the arithmetic as a function): a shared helper
 * called with three closures would not be inlined, and the floor would be slower than it is.
 */
export const OP_CASES: readonly OpCase[] = [
  {
    name: "add",
    what: "y ← y + x (elementwise, two operands)",
    plain: (x, buffers) => {
      let y = x;
      for (let k = 0; k < CHAIN; k++) {
        const z = buffers[k & 1];
        for (let i = 0; i < x.length; i++) z[i] = y[i] + x[i];
        y = z;
      }
      return total(y);
    },
    wengert: (x) => {
      let y: TensorArg = x;
      for (let k = 0; k < CHAIN; k++) y = add(y, x) as Tensor;
      return sum(y);
    },
  },
  {
    name: "sin",
    what: "y ← sin y (elementwise, one operand)",
    plain: (x, buffers) => {
      let y = x;
      for (let k = 0; k < CHAIN; k++) {
        const z = buffers[k & 1];
        for (let i = 0; i < x.length; i++) z[i] = Math.sin(y[i]);
        y = z;
      }
      return total(y);
    },
    wengert: (x) => {
      let y: TensorArg = x;
      for (let k = 0; k < CHAIN; k++) y = sin(y) as Tensor;
      return sum(y);
    },
  },
  {
    name: "sum",
    what: "s ← s + Σ x (a reduction, and one scalar add)",
    plain: (x) => {
      let s = 0;
      for (let k = 0; k < CHAIN; k++) {
        let t = 0;
        for (let i = 0; i < x.length; i++) t += x[i];
        s += t;
      }
      return s;
    },
    wengert: (x) => {
      let s: Scalar = 0;
      for (let k = 0; k < CHAIN; k++) s = add(s, sum(x));
      return s;
    },
  },
];

export type OpMode = "plain loop" | "untraced" | "traced" | "grad" | "compileGrad";
export const OP_MODES: readonly OpMode[] = ["plain loop", "untraced", "traced", "grad", "compileGrad"];

/** One call of the chain in a mode (compileGrad's function made once per case and size). */
export function caller(c: OpCase, mode: OpMode): (x: Float64Array) => unknown {
  switch (mode) {
    case "plain loop": {
      let buffers: [Float64Array, Float64Array] = [new Float64Array(0), new Float64Array(0)];
      return (x) => {
        if (buffers[0].length !== x.length) buffers = [new Float64Array(x.length), new Float64Array(x.length)];
        return c.plain(x, buffers);
      };
    }
    case "untraced":
      return (x) => c.wengert(x);
    case "traced":
      // the value under a trace: the operations recorded, no reverse sweep
      return (x) => vjp((t) => c.wengert(t), x)[0];
    case "grad":
      return (x) => grad((t) => c.wengert(t), x);
    case "compileGrad": {
      const g = compileGrad((t: Tensor) => c.wengert(t));
      return (x) => g(x);
    }
  }
}

/** Median nanoseconds per call: batches of calls (each at least ~1 ms), for at least `minSeconds`. */
export function nsPerCall(f: () => unknown, minSeconds: number): number {
  for (let i = 0; i < 3; i++) f();
  let reps = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) f();
    if (Number(process.hrtime.bigint() - t0) >= 1e6 || reps >= 1 << 20) break;
    reps *= 2;
  }
  const batches: number[] = [];
  const until = performance.now() + minSeconds * 1000;
  while (batches.length < 5 || performance.now() < until) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) f();
    batches.push(Number(process.hrtime.bigint() - t0) / reps);
  }
  batches.sort((a, b) => a - b);
  return batches[batches.length >> 1];
}

export interface OpCostRow {
  readonly op: string;
  readonly mode: OpMode;
  /** Nanoseconds per operation at each of OP_SIZES. */
  readonly ns: readonly number[];
}

/** Every case, mode and size, in order (`progress` is told each case). */
export function measureOpCosts(minSeconds: number, progress?: (line: string) => void): OpCostRow[] {
  const rows: OpCostRow[] = [];
  for (const c of OP_CASES) {
    progress?.(`ops: ${c.name}`);
    for (const mode of OP_MODES) {
      const ns = OP_SIZES.map((n) => {
        const x = Float64Array.from({ length: n }, (_, i) => 0.5 + 0.25 * Math.sin(i));
        const f = caller(c, mode);
        return nsPerCall(() => f(x), minSeconds) / CHAIN;
      });
      rows.push({ op: c.name, mode, ns });
    }
  }
  return rows;
}

/** The rows as Markdown: per operation and mode, the time per operation at each size, and its ratio to the plain loop. */
export function opCostTable(rows: readonly OpCostRow[]): string {
  const sizes = OP_SIZES.map((n) => (n === 10_000 ? "n = 10⁴" : `n = ${n}`));
  const lines = [
    `Time per operation (a chain of ${CHAIN}), median of batches; in brackets, over the plain loop's time at the same n.`,
    "",
    ...OP_CASES.map((c) => `- ${c.name}: ${c.what}`),
    "",
    `| operation | mode | ${sizes.join(" | ")} |`,
    `|---|---|${sizes.map(() => "--:").join("|")}|`,
  ];
  for (const r of rows) {
    const plain = rows.find((p) => p.op === r.op && p.mode === "plain loop");
    const cells = r.ns.map((ns, i) =>
      r.mode === "plain loop" || plain === undefined ? formatMs(ns / 1e6) : `${formatMs(ns / 1e6)} (${formatRatio(ns / plain.ns[i])})`,
    );
    lines.push(`| ${r.op} | ${r.mode} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/**
 * `pnpm bench -- --ops [--quick] [--no-write]`: measure, print the table, and write it to
 * results/ops.md (0.5 s per cell; 0.02 s with --quick).
 */
export function runOpCosts(options: { readonly quick: boolean; readonly write: boolean }): void {
  const started = performance.now();
  const rows = measureOpCosts(options.quick ? 0.02 : 0.5, (line) => process.stderr.write(`${line}\n`));
  const table = opCostTable(rows);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "?"}`;
  const header =
    "# The cost of one tensor operation\n\n" +
    `Written by \`pnpm bench -- --ops${options.quick ? " --quick" : ""}\` on ${new Date().toISOString()} in ${seconds} s, ` +
    `Node ${process.versions.node}, ${machine} (a machine shared with other jobs: ratios are steadier than times).\n\n`;
  process.stdout.write(`${header}${table}\n`);
  if (options.write) {
    const file = fileURLToPath(new URL("../results/ops.md", import.meta.url));
    writeFileSync(file, `${header}${table}\n`);
    process.stderr.write(`wrote ${file}\n`);
  }
}
