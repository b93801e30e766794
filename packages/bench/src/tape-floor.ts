/**
 * @file The bench's tape floor: what an uncached gradient of scalar code costs in the
 * least a trace-based tool can do, beside wengert's `grad` and the hand-written gradient,
 * on W1 (rosenbrock, n = 1000) and W3 (Newton's loop and a branch per element, m = 1000) in one run.
 *
 * An uncached `grad` traces f on every call (f may read anything it closes over), so every
 * scalar operation of f makes a value the user's code holds, and a tape entry the reverse
 * sweep reads (the Wengert list of the paper's §3). The minimal tape below does only that:
 * one object per operation, four typed-array columns, and a sweep that is one `switch` over
 * the operations the two programs use — no shapes, tensors, nesting, kinks, ties or errors;
 * a decision reads a value off the tape and records nothing. The goal for
 * uncached `grad` (within 40× of hand-written) is measured against this floor here.
 */
import { loadavg, cpus } from "node:os";
import { grad } from "@wengert/core";
import { rosenbrockGrad, rosenbrockInput, rosenbrockW } from "./workloads/w1-rosenbrock.js";
import { controlGrad, controlInput, controlWengertGrad, EPS, MAX_ITERS } from "./workloads/w3-control.js";
import { relativeError } from "./check.js";
import { interleaved } from "./interleaved.js";
import { formatMs } from "./report/format.js";
import type { Section } from "./results.js";

const enum Op {
  Input,
  Const,
  Add,
  Sub,
  Mul,
  Div,
  Square,
  Sin,
}

/** A value on the minimal tape: its index (an object, as a traced value must be one the user's code can hold). */
class Traced {
  constructor(readonly i: number) {}
}
type Val = Traced | number;

/** The minimal tape: columns grown by doubling, reused across calls. */
class MinimalTape {
  n = 0;
  op = new Int32Array(1 << 12);
  a = new Int32Array(1 << 12);
  b = new Int32Array(1 << 12);
  value = new Float64Array(1 << 12);
  adjoint = new Float64Array(1 << 12);

  push(op: Op, a: number, b: number, value: number): number {
    if (this.n === this.op.length) this.grow();
    const i = this.n++;
    this.op[i] = op;
    this.a[i] = a;
    this.b[i] = b;
    this.value[i] = value;
    return i;
  }

  private grow(): void {
    const twice = <T extends Int32Array | Float64Array>(c: T): T => {
      const d = new (c.constructor as new (n: number) => T)(2 * c.length);
      d.set(c);
      return d;
    };
    [this.op, this.a, this.b, this.value, this.adjoint] = [twice(this.op), twice(this.a), twice(this.b), twice(this.value), twice(this.adjoint)];
  }

  index(x: Val): number {
    return typeof x === "number" ? this.push(Op.Const, 0, 0, x) : x.i;
  }

  binary(op: Op.Add | Op.Sub | Op.Mul | Op.Div, x: Val, y: Val): Traced {
    const a = this.index(x);
    const b = this.index(y);
    const u = this.value[a];
    const v = this.value[b];
    return new Traced(this.push(op, a, b, op === Op.Add ? u + v : op === Op.Sub ? u - v : op === Op.Mul ? u * v : u / v));
  }

  /** A decision's operand: a traced value's value, read off the tape (nothing recorded). */
  primal(x: Val): number {
    return typeof x === "number" ? x : this.value[x.i];
  }

  /** The reverse sweep (the paper's Fig. 6 for these four operations), from `out` down. */
  sweep(out: number): void {
    const { op, a, b, value, adjoint } = this;
    adjoint.fill(0, 0, this.n);
    adjoint[out] = 1;
    for (let i = out; i >= 0; i--) {
      const g = adjoint[i];
      if (g === 0) continue;
      switch (op[i]) {
        case Op.Add:
          adjoint[a[i]] += g;
          adjoint[b[i]] += g;
          break;
        case Op.Sub:
          adjoint[a[i]] += g;
          adjoint[b[i]] -= g;
          break;
        case Op.Mul:
          adjoint[a[i]] += g * value[b[i]];
          adjoint[b[i]] += g * value[a[i]];
          break;
        case Op.Div:
          adjoint[a[i]] += g / value[b[i]];
          adjoint[b[i]] -= (g * value[i]) / value[b[i]];
          break;
        case Op.Square:
          adjoint[a[i]] += 2 * g * value[a[i]];
          break;
        case Op.Sin:
          adjoint[a[i]] += g * Math.cos(value[a[i]]);
          break;
      }
    }
  }
}

const tape = new MinimalTape();
const add = (x: Val, y: Val) => tape.binary(Op.Add, x, y);
const sub = (x: Val, y: Val) => tape.binary(Op.Sub, x, y);
const mul = (x: Val, y: Val) => tape.binary(Op.Mul, x, y);
const div = (x: Val, y: Val) => tape.binary(Op.Div, x, y);
const sin = (x: Val): Traced => {
  const a = tape.index(x);
  return new Traced(tape.push(Op.Sin, a, 0, Math.sin(tape.value[a])));
};
const square = (x: Val): Traced => {
  const a = tape.index(x);
  return new Traced(tape.push(Op.Square, a, 0, tape.value[a] * tape.value[a]));
};

/** W1's rosenbrock as rosenbrockW writes it with wengert's operations, operation for operation. */
function rosenbrockMinimal(x: readonly Traced[]): Val {
  let s: Val = 0;
  for (let i = 0; i < x.length - 1; i++) {
    const t = sub(x[i + 1], square(x[i]));
    s = add(s, add(mul(100, square(t)), square(sub(1, x[i]))));
  }
  return s;
}

/** W3's per-element function as gW writes it with wengert's operations, operation for operation. */
function newtonMinimal(a: Val): Val {
  let y = a;
  for (let it = 0; it < MAX_ITERS; it++) {
    const r = tape.primal(sub(mul(y, y), a));
    if (!(r > EPS || r < -EPS)) break;
    y = mul(0.5, add(y, div(a, y)));
  }
  return tape.primal(y) > 1 ? mul(mul(y, y), y) : sin(y);
}

/** W3's sum over the elements, as controlW writes it. */
function controlMinimal(a: readonly Traced[]): Val {
  let s: Val = 0;
  for (const ak of a) s = add(s, newtonMinimal(ak));
  return s;
}

/** The gradient of `f` by the minimal tape: trace, sweep, read the inputs' adjoints. */
function minimalGradOf(f: (x: readonly Traced[]) => Val, x: ArrayLike<number>): Float64Array {
  tape.n = 0;
  const inputs = Array.from(x, (v) => new Traced(tape.push(Op.Input, 0, 0, v)));
  const y = f(inputs);
  tape.sweep(tape.index(y));
  return tape.adjoint.slice(0, x.length);
}

/** W1's gradient by the minimal tape. */
export const minimalGrad = (x: ArrayLike<number>): Float64Array => minimalGradOf(rosenbrockMinimal, x);
/** W3's gradient by the minimal tape. */
export const minimalControlGrad = (a: ArrayLike<number>): Float64Array => minimalGradOf(controlMinimal, a);

/** One workload of the table: its three gradients at one point. */
interface FloorRow {
  readonly name: string;
  readonly hand: () => unknown;
  readonly minimal: () => Float64Array;
  readonly wengert: () => number[];
  readonly reference: number[];
}

function floorRows(): FloorRow[] {
  const x = rosenbrockInput(1000);
  const xs = Array.from(x);
  const out = new Float64Array(x.length);
  const a = controlInput(1000);
  const as = Array.from(a);
  const aOut = new Float64Array(a.length);
  return [
    {
      name: "W1 rosenbrock n=1000",
      hand: () => rosenbrockGrad(x, out),
      minimal: () => minimalGrad(x),
      wengert: () => grad(rosenbrockW, xs) as number[],
      reference: Array.from(rosenbrockGrad(x)),
    },
    {
      name: "W3 control flow m=1000",
      hand: () => controlGrad(a, aOut),
      minimal: () => minimalControlGrad(a),
      wengert: () => controlWengertGrad(as),
      reference: Array.from(controlGrad(a)),
    },
  ];
}

export function floorSection(quick: boolean, log: (line: string) => void): Section {
  const load = `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores at the start`;
  const ratio = (a: number, b: number) => `×${(a / b).toFixed(1)}`;
  const rows: string[] = [];
  const notes: string[] = [];
  const data: Record<string, unknown> = {};
  for (const row of floorRows()) {
    const error = { minimal: relativeError(Array.from(row.minimal()), row.reference), wengert: relativeError(row.wengert(), row.reference) };
    log(`tape floor: ${row.name}, interleaved`);
    const times = interleaved(
      [
        { what: "hand-written", run: row.hand },
        { what: "minimal tape (trace and sweep)", run: row.minimal },
        { what: "wengert grad (uncached)", run: row.wengert },
      ],
      quick ? 3 : 9,
      quick ? 50 : 150,
      quick ? 300 : 2000,
    );
    const [h, m, w] = times.map((t) => t.ms);
    rows.push(
      `| ${row.name}: hand-written | ${formatMs(h)} | ×1.0 | — |`,
      `| ${row.name}: minimal tape (trace and sweep) | ${formatMs(m)} | ${ratio(m, h)} | ×1.0 |`,
      `| ${row.name}: wengert grad (uncached) | ${formatMs(w)} | ${ratio(w, h)} | ${ratio(w, m)} |`,
    );
    notes.push(`- ${row.name}: relative error to hand-written: minimal tape ${error.minimal.toExponential(1)}, wengert ${error.wengert.toExponential(1)}.`);
    data[row.name] = { times, error };
  }
  const markdown = [
    "The tape floor (tape-floor.ts): an uncached gradient of scalar code — W1 (n = 1000, about 11 000 tape entries) and W3 " +
      "(m = 1000, Newton's loop and a branch per element) — in the least a tracer can do (one object per operation, four columns, " +
      `a switch sweep, decisions read off the tape), beside wengert's \`grad\` (${load}).`,
    "",
    "| workload: gradient | median | / hand-written | / minimal tape |",
    "|---|--:|--:|--:|",
    ...rows,
    "",
    ...notes,
  ].join("\n");
  return { markdown, data };
}
