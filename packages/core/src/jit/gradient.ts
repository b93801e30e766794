/**
 * @file A cached trace of reals compiled to JavaScript: its replay at a new point and
 * its reverse sweep, as loops over Float64Arrays (compileGrad's hot path).
 *
 * The forward code recomputes the values the gradient needs, checks every recorded
 * decision (guard) and kink right after its arguments are computed, and reports
 * whether the trace holds at the new point. The reverse code is diff/sweep.ts's sweep
 * specialised to this trace: which instructions carry a cotangent, which arguments are
 * active and which contribution reaches a variable first are known before it runs, so
 * each contribution is a plain `ct[a] = …` (first) or `ct[a] += …` (later; an input's
 * goes straight into `g`, the gradient array the call returns), in the same
 * order with the same rules (javascript.ts): the same numbers as the sweep, to the bit.
 * Both are re-rolled into loops (reroll.ts) before the source is written (source.ts).
 */
import type { PredicateName } from "@wengert/ops";
import { activity } from "../diff/place.js";
import { ARITY, CONST, FIRST_PRIMITIVE, INPUT, KERNELS, KINKS, primitiveOf, scalarSpec } from "../trace/opcodes.js";
import type { TraceTerm } from "../trace/term.js";
import type { Guard } from "../trace/tracer.js";
import { COMPARISON, javascript, literal } from "./javascript.js";
import { codeSize, reroll, Shapes, type Node, type Stmt } from "./reroll.js";
import { Accesses, planRegisters, type Space, type Use, type UsesOf } from "./registers.js";
import { chunkSources, type At, type Template } from "./source.js";

/** Value and gradient at new inputs, or null where the trace does not hold there. */
export type Replay = (inputs: ArrayLike<number>) => [number, number[]] | null;

/**
 * What the compiled code holds: how many statements its loops and straight code have,
 * and how many groups of variables its loops keep in locals (registers.ts).
 */
export interface CompiledStats {
  readonly forward: number;
  readonly reverse: number;
  readonly locals: number;
}

/** The compiled replay, what its code holds, and its source (one function per chunk). */
export interface Compiled {
  readonly replay: Replay;
  readonly stats: CompiledStats;
  readonly source: { readonly forward: readonly string[]; readonly reverse: readonly string[] };
}

/** A statement shape's code, given the places its accesses name and its indices. */
type Form = (at: At, idx: readonly string[]) => string;

/** Traces whose re-rolled code is larger than this are replayed by the interpreter. */
export const MAX_STATEMENTS = 40000;

type Forward = (v: Float64Array, x: ArrayLike<number>, K: typeof KERNELS, KINK: typeof KINKS) => boolean;
type Reverse = (v: Float64Array, ct: Float64Array, g: number[], K: typeof KERNELS) => void;

/**
 * The compiled replay of `term` (a real-valued trace of reals) under its guards, or
 * null if its code would be too large to be worth it.
 */
export function compileReplay(term: TraceTerm, guards: readonly Guard[], reportTies: boolean): Compiled | null {
  const tape = term.tape;
  const { op, a, b, length: n } = tape;
  const out = term.output.atoms[0];
  const shapes = new Shapes();
  const forms: Form[] = [];
  const shape = (key: string, form: Form): number => {
    const id = shapes.of(key);
    forms[id] = form;
    return id;
  };
  const template: Template = (sig, at, idx) => forms[sig](at, idx);
  // literals are written into the code (their values are part of a statement's shape)
  const literalAt = (v: number): string | null => (op[v] === CONST ? literal(tape.val[v]) : null);

  // the reverse sweep, decided ahead: has[v] once a contribution has reached v
  const active = activity(term);
  const has = new Uint8Array(n);
  if (active[out]) has[out] = 1;
  const reverse: Stmt[] = [];
  // cotangents of inputs are written straight into the gradient `g` (by input index, after
  // the renumbering below), the array the call returns; the others into ct
  const cotangent = (x: number): Space => (op[x] === INPUT ? "g" : "ct");
  if (active[out]) reverse.push({ kind: "stmt", sig: shape(`seed:${cotangent(out)}`, (at) => `${at(cotangent(out), 0, "write")} = 1;`), idx: [out] });
  for (let i = n - 1; i >= 0; i--) {
    if (!has[i] || op[i] < FIRST_PRIMITIVE) continue;
    const args = ARITY[op[i]] === 1 ? [a[i]] : [a[i], b[i]];
    // per argument: 0 none, 1 first contribution (=), 2 a later one (+=)
    const how = args.map((v, k) => {
      if (!active[v] || ruleSource(op[i], k, "0", "0", "0", "c") === null) return 0;
      const first = has[v] ? 2 : 1;
      has[v] = 1;
      return first;
    });
    const code = op[i];
    const [la, lb] = [literalAt(a[i]), literalAt(b[i])];
    const into = args.map(cotangent);
    const sig = shape(`r${code}:${how.join("")}:${la}:${lb}:${into.join("")}`, (at) => {
      const lines = [`c = ${at("ct", 0, "read")};`];
      how.forEach((h, k) => {
        if (h === 0) return;
        const rule = ruleSource(code, k, la ?? at("v", 1, "read"), lb ?? at("v", 2, "read"), at("v", 0, "read"), "c")!;
        lines.push(`${at(into[k], k + 1, h === 1 ? "write" : "update")} ${h === 1 ? "=" : "+="} ${rule};`);
      });
      return lines.join(" ");
    });
    reverse.push({ kind: "stmt", sig, idx: [i, a[i], b[i]] });
  }

  // the forward values needed: the output, guards, kinks, and what the rules read
  const kinked = (i: number): boolean => reportTies && op[i] >= FIRST_PRIMITIVE && KINKS[op[i]] !== undefined;
  const need = new Uint8Array(n);
  need[out] = 1;
  for (const g of guards) need[g.a] = need[g.b] = 1;
  for (let i = 0; i < n; i++) {
    if (!kinked(i) && !(has[i] && op[i] >= FIRST_PRIMITIVE)) continue;
    need[i] = need[a[i]] = 1;
    if (ARITY[op[i]] === 2) need[b[i]] = 1;
  }
  for (let i = n - 1; i >= 0; i--) {
    if (!need[i] || op[i] < FIRST_PRIMITIVE) continue;
    need[a[i]] = 1;
    if (ARITY[op[i]] === 2) need[b[i]] = 1;
  }
  // a guard is checked once its later argument is computed (literals are always there)
  const guardsAt = new Map<number, Guard[]>();
  for (const g of guards) {
    const at = Math.max(op[g.a] === CONST ? -1 : g.a, op[g.b] === CONST ? -1 : g.b);
    if (at < 0) continue; // decided on literals: it comes out the same everywhere
    if (!guardsAt.has(at)) guardsAt.set(at, []);
    guardsAt.get(at)!.push(g);
  }
  const forward: Stmt[] = [];
  const input = shape("in", (at, [, K]) => `${at("v", 0, "write")} = x[${K}];`);
  for (let i = 0; i < n; i++) {
    if (need[i] && op[i] === INPUT) forward.push({ kind: "stmt", sig: input, idx: [i, a[i]] });
    if (need[i] && op[i] >= FIRST_PRIMITIVE) {
      const code = op[i];
      const [la, lb] = [literalAt(a[i]), literalAt(b[i])];
      const sig = shape(`f${code}:${la}:${lb}`, (at) => `${at("v", 0, "write")} = ${kernelSource(code, la ?? at("v", 1, "read"), lb ?? at("v", 2, "read"))};`);
      forward.push({ kind: "stmt", sig, idx: [i, a[i], b[i]] });
    }
    if (kinked(i)) {
      const code = op[i];
      forward.push({ kind: "stmt", sig: shape(`k${code}`, (at) => `if (KINK[${code}](${at("v", 0, "read")})) return false;`), idx: [a[i]] });
    }
    for (const g of guardsAt.get(i) ?? []) {
      const tie = reportTies && g.a !== g.b;
      const [la, lb] = [literalAt(g.a), literalAt(g.b)];
      const sig = shape(`g${g.pred}:${g.outcome}:${tie}:${la}:${lb}`, (at) => guardSource(g.pred, g.outcome, tie, la ?? at("v", 0, "read"), lb ?? at("v", 1, "read")));
      forward.push({ kind: "stmt", sig, idx: [g.a, g.b] });
    }
  }

  const forwardCode = reroll(forward, shapes);
  const reverseCode = reroll(reverse, shapes);
  if (codeSize(forwardCode) + codeSize(reverseCode) > MAX_STATEMENTS) return null;
  // the inputs' variables, or -1 for an input no contribution reaches (its gradient is 0)
  const params = Int32Array.from(term.params[0].atoms, (p) => (has[p] ? p : -1));

  // what each loop keeps in locals: the replay reads the value and the gradient after it
  const usesOf = recordUses(forms);
  const plan = (fwd: Stmt[], rev: Stmt[], code: readonly (readonly Node[])[], outVar: number, inputs: Int32Array) => {
    const liveOut = [{ space: "v" as const, x: outVar }, ...[...inputs].filter((p) => p >= 0).map((x) => ({ space: "g" as const, x }))];
    return planRegisters(code, usesOf, new Accesses(n, fwd.concat(rev), usesOf, liveOut));
  };
  // Then the variables are numbered again: the inputs first (input k is variable k, its
  // cotangent g[k]), then those still in the arrays: they share cache lines instead of
  // lying scattered among the ones that live in locals (a loop's stored values 4 apart,
  // say). A renaming, so nothing else changes; the code is re-rolled and planned again
  // under it (the same loops, the indices' steps shrunk).
  const { inMemory } = plan(forward, reverse, [forwardCode, reverseCode], out, params);
  const order = new Int32Array(n).fill(-1);
  let next = 0;
  for (const x of term.params[0].atoms) order[x] = next++;
  for (const resident of [1, 0]) for (let x = 0; x < n; x++) if (order[x] < 0 && inMemory[x] === resident) order[x] = next++;
  const named: boolean[][] = []; // per shape, per slot: whether it names a variable (not an input's place in x)
  const rename = (s: Stmt): Stmt => {
    const slots = (named[s.sig] ??= s.idx.map((_, k) => usesOf(s.sig).some((u) => u.slot === k)));
    return { kind: "stmt", sig: s.sig, idx: s.idx.map((x, k) => (slots[k] ? order[x] : x)) };
  };
  const [forward2, reverse2] = [forward.map(rename), reverse.map(rename)];
  const code = [reroll(forward2, shapes), reroll(reverse2, shapes)];
  const params2 = params.map((p) => (p < 0 ? -1 : order[p]));
  const out2 = order[out];
  const { groups } = plan(forward2, reverse2, code, out2, params2);
  const stats = { forward: codeSize(code[0]), reverse: codeSize(code[1]), locals: [...groups.values()].reduce((k, gs) => k + gs.length, 0) };
  const source = { forward: chunkSources(code[0], template, groups), reverse: chunkSources(code[1], template, groups) };
  const forwards = source.forward.map((s) => new Function("v", "x", "K", "KINK", `${s}\nreturn true;`) as Forward);
  const reverses = source.reverse.map((s) => new Function("v", "ct", "g", "K", `let c = 0;\n${s}`) as Reverse);

  const v = new Float64Array(n);
  for (let x = 0; x < n; x++) v[order[x]] = tape.val[x]; // the tape's values, literals among them
  const ct = new Float64Array(n);
  // the gradient starts as a copy of zeros held as doubles (an input no contribution
  // reaches keeps its 0), so the reverse code's writes need no change of element kind
  const zeros: number[] = [];
  for (let k = 0; k < params2.length; k++) zeros.push(0.5);
  zeros.fill(0);
  const replay: Replay = (inputs) => {
    for (const f of forwards) if (!f(v, inputs, KERNELS, KINKS)) return null;
    const g = zeros.slice();
    for (const f of reverses) f(v, ct, g, KERNELS);
    return [v[out2], g];
  };
  return { replay, stats, source };
}

/** The source of primitive `code`'s kernel applied to the expressions x, y. */
function kernelSource(code: number, x: string, y: string): string {
  const name = primitiveOf(code).name as keyof typeof javascript;
  return ARITY[code] === 1 ? (javascript[name] as (x: string) => string)(x) : (javascript[name] as (x: string, y: string) => string)(x, y);
}

/** The source of the reverse rule of `code` for argument k, or null for a symbolic zero. */
function ruleSource(code: number, k: number, x: string, y: string, out: string, ct: string): string | null {
  const spec = scalarSpec(code);
  return spec.arity === 1 ? spec.reverse(javascript, x, out, ct) : spec.reverse[k](javascript, x, y, out, ct);
}

/** `return false` unless `pred(x, y)` comes out `outcome` (and, with tie, x ≠ y). */
function guardSource(pred: PredicateName, outcome: boolean, tie: boolean, x: string, y: string): string {
  const test = `${x} ${COMPARISON[pred]} ${y}`;
  const fails = outcome ? `!(${test})` : `(${test})`;
  return `if (${tie ? `${x} === ${y} || ` : ""}${fails}) return false;`;
}

/**
 * Each shape's accesses, in order: its code written once with a marker for each place,
 * keeping those the code uses (a rule may not read every argument).
 */
function recordUses(forms: readonly Form[]): UsesOf {
  const memo: (readonly Use[])[] = [];
  return (sig) => {
    if (memo[sig] === undefined) {
      const made: { use: Use; mark: string }[] = [];
      const at: At = (space, slot, mode) => {
        const mark = `@${made.length}@`;
        made.push({ use: { space, slot, mode }, mark });
        return mark;
      };
      const code = forms[sig](at, ["0", "0", "0"]);
      memo[sig] = made.filter((m) => code.includes(m.mark)).map((m) => m.use);
    }
    return memo[sig];
  };
}
