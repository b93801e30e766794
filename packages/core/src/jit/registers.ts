/**
 * @file Register promotion: the array elements a compiled loop can keep in locals.
 *
 * Compiled code keeps every value in `v[…]` and every cotangent in `ct[…]`: each use is
 * a load, each definition a store, and the index arithmetic and bounds checks around
 * them cost more than the arithmetic itself. Most of these variables live briefly: a
 * value made in one iteration of a loop and used only in that iteration, a cotangent
 * passed from one iteration to the next (an accumulator), an input read by every
 * iteration. Such a variable can live in a JavaScript local, which V8 keeps in a
 * register, and touch the array only where code outside the loop needs it.
 *
 * A statement's indices name variables (reroll.ts); its `uses` say which array each
 * index reaches and how (read, write, update), in order. Inside a loop with counter r,
 * one index of a statement of the body moves by a constant step s: it reaches
 * `c + s·r`. Indices with the same step whose constants differ by a multiple of s
 * (`ct[997-r]`, `ct[998-r]`) reach the same variables a few iterations apart, and form
 * a group: at iteration r, member u reaches y(r+u), for y(q) = c₀ + s·q. The group
 * keeps y(r) … y(r+U) in locals reg[0] … reg[U], shifted down one at the end of each
 * iteration (reg[u] ← reg[u+1]); y(r) then leaves, and is stored if code after the loop
 * reads it. An index that does not move (s = 0) is one variable, kept in one local for
 * the whole loop.
 *
 * This is sound exactly when, within the loop, nothing but the group's members reaches
 * its variables: checked by counting, for every variable of the group and every time
 * the loop runs (an inner loop runs once per iteration of the loops around it), its
 * accesses in the loop against those the group accounts for. Loads and stores at the
 * edges only copy what the array would hold, so the numbers are unchanged (tested to
 * the bit against the interpreter). The plan also tells which variables the code still
 * touches in the arrays; gradient.ts numbers those first, so that they lie together.
 */
import type { Loop, Node, Statements, Stmt } from "./reroll.js";

/** The arrays compiled code reads and writes: values, cotangents, and the inputs' cotangents (the gradient). */
export type Space = "v" | "ct" | "g";

/** How a statement touches a variable: `update` reads it and writes it (`+=`). */
export type Mode = "read" | "write" | "update";

/** One access of a statement: `space[idx[slot]]`, in the order the statement makes them. */
export interface Use {
  readonly space: Space;
  readonly slot: number;
  readonly mode: Mode;
}

/** A statement shape's accesses, in order (the same for every statement of that shape). */
export type UsesOf = (sig: number) => readonly Use[];

/** One member of a group: the indices (flat slots of the loop's body) reaching y(r + u). */
export interface Member {
  readonly slots: readonly number[];
  readonly u: number;
}

/** Variables of one array kept in locals across a loop (see the file comment). */
export interface Group {
  readonly space: Space;
  readonly step: number;
  readonly members: readonly Member[];
  /** The largest u: the group holds U + 1 variables at a time. */
  readonly top: number;
  /** Whether y(r + U) is read before it is written in iteration r (so it is loaded first). */
  readonly load: boolean;
  /** Whether code after the loop reads a variable the group writes and lets go within the loop (stored as it leaves). */
  storeEach: boolean;
  /** Whether code after the loop reads one the group still holds when the loop ends (stored after it). */
  storeAfter: boolean;
  valid: boolean;
}

/** Groups holding more variables than this at a time are left in the arrays. */
const MAX_WINDOW = 4;

const SPACES: readonly Space[] = ["v", "ct", "g"];

/**
 * Where each variable is accessed: positions (a statement's place in the whole program,
 * forward then reverse, loops unrolled) per array and variable, in order.
 */
export class Accesses {
  private readonly start: Int32Array[] = [];
  private readonly at: Int32Array[] = [];
  /** How many variables there are (indices 0 … n − 1). */
  readonly n: number;

  /**
   * `program`: every statement in order (in parts: forward, then reverse); `liveOut`:
   * variables read after the program (the value and the gradient), at the position after
   * the last statement.
   */
  constructor(n: number, program: readonly Statements[], usesOf: UsesOf, liveOut: readonly { space: Space; x: number }[]) {
    this.n = n;
    // per shape, its accesses as (array, slot) pairs: this runs over every statement twice
    const pairs: number[][] = [];
    const pairsOf = (sig: number): number[] => (pairs[sig] ??= usesOf(sig).flatMap((u) => [SPACES.indexOf(u.space), u.slot]));
    const visit = (f: (space: number, x: number, p: number) => void): void => {
      let p = 0;
      for (const part of program) {
        for (let i = 0; i < part.length; i++, p++) {
          const uses = pairsOf(part.sig(i));
          for (let k = 0; k < uses.length; k += 2) f(uses[k], part.index(i, uses[k + 1]), p);
        }
      }
      for (const l of liveOut) f(SPACES.indexOf(l.space), l.x, p);
    };
    // counting sort into one array per space: start[x] … start[x+1] are x's positions
    const counts = SPACES.map(() => new Int32Array(n + 1));
    visit((s, x) => counts[s][x + 1]++);
    for (let s = 0; s < SPACES.length; s++) {
      for (let x = 0; x < n; x++) counts[s][x + 1] += counts[s][x];
      this.start.push(counts[s].slice());
      this.at.push(new Int32Array(counts[s][n]));
    }
    visit((s, x, p) => (this.at[s][counts[s][x]++] = p));
  }

  /**
   * How many accesses of `space[x]` lie in positions [lo, hi): by binary search, as a
   * variable every iteration of a loop reads is checked once per run of an inner loop.
   */
  countIn(space: Space, x: number, lo: number, hi: number): number {
    const s = SPACES.indexOf(space);
    const from = this.start[s][x];
    const to = this.start[s][x + 1];
    return this.firstAtOrAfter(s, from, to, hi) - this.firstAtOrAfter(s, from, to, lo);
  }

  /** The first index in [from, to) of space s's positions at p or later (to if none). */
  private firstAtOrAfter(s: number, from: number, to: number, p: number): number {
    const at = this.at[s];
    while (from < to) {
      const mid = (from + to) >>> 1;
      if (at[mid] < p) from = mid + 1;
      else to = mid;
    }
    return from;
  }

  /** How many accesses of `space[x]` there are in all. */
  total(space: Space, x: number): number {
    const start = this.start[SPACES.indexOf(space)];
    return start[x + 1] - start[x];
  }

  /** The position of the last access of `space[x]`, or −1. */
  last(space: Space, x: number): number {
    const s = SPACES.indexOf(space);
    const e = this.start[s][x + 1];
    return e > this.start[s][x] ? this.at[s][e - 1] : -1;
  }
}

/** An access of one iteration of a loop's body: its flat slot, and how often one iteration makes it. */
interface Occurrence {
  readonly space: Space;
  readonly slot: number;
  readonly mode: Mode;
  readonly times: number;
}

/**
 * The accesses one iteration of `loop` makes through indices that move with it (not
 * with a loop inside it), in order: a statement's own, and those of inner loops whose
 * index is the same in all their iterations (counted once per inner iteration).
 * Recursive in the depth of loop nesting only, which is shallow.
 */
function occurrences(loop: Loop, usesOf: UsesOf): Occurrence[] {
  const out: Occurrence[] = [];
  let f = 0;
  for (const x of loop.body) {
    if (x.kind === "stmt") for (const u of usesOf(x.sig)) out.push({ space: u.space, slot: f + u.slot, mode: u.mode, times: 1 });
    else for (const o of occurrences(x, usesOf)) if (x.step[o.slot] === 0) out.push({ ...o, slot: f + o.slot, times: o.times * x.count });
    f += x.idx.length;
  }
  return out;
}

/** Statements one run of the nodes makes, loops unrolled. */
function lengthOf(nodes: readonly Node[], memo: Map<Node, number>): number {
  let n = 0;
  for (const x of nodes) {
    if (x.kind === "stmt") n++;
    else {
      let m = memo.get(x);
      if (m === undefined) memo.set(x, (m = x.count * lengthOf(x.body, memo)));
      n += m;
    }
  }
  return n;
}

/** A run of a loop: its indices' values in its first iteration, and its positions [lo, hi). */
interface Run {
  readonly loop: Loop;
  readonly base: readonly number[];
  readonly lo: number;
  readonly hi: number;
}

/**
 * Every run of every loop of `functions` (one program), outer loops before the loops in
 * them, each with the loop it sits in and at which flat slot (null at the top).
 */
function forEachRun(functions: readonly (readonly Node[])[], visit: (run: Run, around: { loop: Loop; offset: number } | null) => void): void {
  const lengths = new Map<Node, number>();
  const stack: { nodes: readonly Node[]; idx: readonly number[]; pos: number; around: Loop | null }[] = [];
  let pos = 0;
  for (const nodes of functions) {
    stack.push({ nodes, idx: nodes.flatMap((x) => x.idx), pos, around: null });
    pos += lengthOf(nodes, lengths);
  }
  stack.reverse();
  while (stack.length > 0) {
    const { nodes, idx, pos, around } = stack.pop()!;
    let f = 0;
    let p = pos;
    for (const x of nodes) {
      const w = x.idx.length;
      if (x.kind === "loop") {
        const base = idx.slice(f, f + w);
        const len = lengthOf(x.body, lengths);
        visit({ loop: x, base, lo: p, hi: p + x.count * len }, around === null ? null : { loop: around, offset: f });
        // inner loops run once per iteration: visit each run
        if (x.body.some((y) => y.kind === "loop")) {
          for (let r = x.count - 1; r >= 0; r--) stack.push({ nodes: x.body, idx: base.map((v, k) => v + r * x.step[k]), pos: p + r * len, around: x });
        }
        p += x.count * len;
      } else p++;
      f += w;
    }
  }
}

/** What each loop keeps in locals, and which variables are still read or written in the arrays. */
export interface RegisterPlan {
  readonly groups: ReadonlyMap<Loop, readonly Group[]>;
  /** 1 for a variable the code touches in `v` or `ct` (the others live in locals only). */
  readonly inMemory: Uint8Array;
}

/**
 * Which variables each loop of `functions` (the forward code, then the reverse code:
 * one program) keeps in locals. `accesses` must index the same program unrolled.
 */
export function planRegisters(functions: readonly (readonly Node[])[], usesOf: UsesOf, accesses: Accesses): RegisterPlan {
  const plans = new Map<Loop, Group[]>();
  const occ = new Map<Loop, Occurrence[]>();
  const around = new Map<Loop, { loop: Loop; offset: number } | null>();
  forEachRun(functions, ({ loop, base, lo, hi }, outer) => {
    let groups = plans.get(loop);
    if (groups === undefined) {
      occ.set(loop, occurrences(loop, usesOf));
      plans.set(loop, (groups = formGroups(loop, occ.get(loop)!, base)));
      around.set(loop, outer);
    }
    for (const g of groups) if (g.valid) check(g, loop, occ.get(loop)!, base, lo, hi, accesses);
  });
  // a variable a loop around keeps in a local stays there: the inner loop's group goes
  // (loops come outer first, so the one around is final when its inner loops are looked at)
  const kept = new Map<Loop, Set<string>>(); // "space:slot" in the loop's slots, its own and from around
  for (const [loop, groups] of plans) {
    const mine = new Set<string>();
    const outer = around.get(loop);
    if (outer) {
      for (const key of kept.get(outer.loop)!) {
        const [space, slot] = key.split(":");
        const s = Number(slot) - outer.offset;
        if (s >= 0 && s < loop.idx.length) mine.add(`${space}:${s}`);
      }
    }
    const final = groups.filter((g) => g.valid && g.members.every((m) => m.slots.every((s) => !mine.has(`${g.space}:${s}`))));
    for (const g of final) for (const m of g.members) for (const s of m.slots) mine.add(`${g.space}:${s}`);
    plans.set(loop, final);
    kept.set(loop, mine);
  }
  return { groups: plans, inMemory: inMemory(functions, plans, occ, accesses) };
}

/**
 * The variables the code still touches in the arrays: those with an access no local
 * stands for, and those loaded or stored at the edges of a loop.
 */
function inMemory(
  functions: readonly (readonly Node[])[],
  plans: ReadonlyMap<Loop, readonly Group[]>,
  occ: ReadonlyMap<Loop, Occurrence[]>,
  accesses: Accesses,
): Uint8Array {
  const memory = new Uint8Array(accesses.n);
  const covered = SPACES.map(() => new Int32Array(accesses.n));
  forEachRun(functions, ({ loop, base }) => {
    for (const g of plans.get(loop)!) {
      const times = timesOf(g, occ.get(loop)!);
      const y0 = base[g.members.find((m) => m.u === 0)!.slots[0]];
      const y = (q: number): number => y0 + g.step * q;
      const c = covered[SPACES.indexOf(g.space)];
      if (g.step === 0) {
        c[y0] += expectedAt(g, loop, times, 0);
        if (g.load || g.storeAfter) memory[y0] = 1;
        continue;
      }
      for (let q = 0; q < loop.count + g.top; q++) c[y(q)] += expectedAt(g, loop, times, q);
      for (let u = 0; u < g.top; u++) memory[y(u)] = 1; // loaded before the loop
      if (g.load) for (let r = 0; r < loop.count; r++) memory[y(r + g.top)] = 1;
      if (g.storeEach) for (let r = 0; r < loop.count; r++) memory[y(r)] = 1;
      if (g.storeAfter) for (let u = 0; u < g.top; u++) memory[y(loop.count + u)] = 1;
    }
  });
  SPACES.forEach((space, k) => {
    for (let x = 0; x < accesses.n; x++) if (accesses.total(space, x) > covered[k][x]) memory[x] = 1;
  });
  return memory;
}

/** A member being formed: its array, step, value in the first iteration, slots, and first occurrence. */
interface Candidate {
  readonly space: Space;
  readonly step: number;
  readonly c: number;
  readonly slots: number[];
  readonly first: number;
}

/** The candidate groups of `loop`, from the indices of its first run. */
function formGroups(loop: Loop, occ: readonly Occurrence[], base: readonly number[]): Group[] {
  // members: indices equal in value and step
  const members = new Map<string, Candidate>();
  occ.forEach((o, k) => {
    const step = loop.step[o.slot];
    const key = `${o.space}:${base[o.slot]}:${step}`;
    const m = members.get(key);
    if (m) {
      if (!m.slots.includes(o.slot)) m.slots.push(o.slot);
    } else members.set(key, { space: o.space, step, c: base[o.slot], slots: [o.slot], first: k });
  });
  // groups: members of one array and step whose constants differ by a multiple of it
  const byResidue = new Map<string, Candidate[]>();
  for (const m of members.values()) {
    const residue = m.step === 0 ? m.c : ((m.c % m.step) + Math.abs(m.step)) % Math.abs(m.step);
    const key = `${m.space}:${m.step}:${residue}`;
    if (!byResidue.has(key)) byResidue.set(key, []);
    byResidue.get(key)!.push(m);
  }
  const groups: Group[] = [];
  for (const ms of byResidue.values()) {
    const { space, step } = ms[0];
    const offsets = ms.map((m) => (step === 0 ? 0 : (m.c - ms[0].c) / step));
    const low = Math.min(...offsets);
    const us = offsets.map((u) => u - low);
    const top = Math.max(...us);
    if (top > MAX_WINDOW || top >= loop.count) continue;
    const topMember = ms[us.indexOf(top)];
    groups.push({
      space,
      step,
      members: ms.map((m, i) => ({ slots: m.slots, u: us[i] })),
      top,
      load: occ[topMember.first].mode !== "write",
      storeEach: false,
      storeAfter: false,
      valid: true,
    });
  }
  return groups;
}

/**
 * Whether the group still holds for this run of the loop (positions [lo, hi)): its
 * members are as in the first run, and no other access in the loop reaches its
 * variables. Also notes whether code after the loop reads a variable it writes.
 */
function check(g: Group, loop: Loop, occ: readonly Occurrence[], base: readonly number[], lo: number, hi: number, accesses: Accesses): void {
  const y0 = base[g.members.find((m) => m.u === 0)!.slots[0]];
  const times = timesOf(g, occ);
  for (const m of g.members) for (const s of m.slots) if (base[s] !== y0 + g.step * m.u) return void (g.valid = false);
  const writes = g.members.some((m) => occ.some((o) => o.space === g.space && o.mode !== "read" && m.slots.includes(o.slot)));
  const count = g.step === 0 ? 1 : loop.count + g.top;
  for (let q = 0; q < count; q++) {
    const x = y0 + g.step * q;
    if (accesses.countIn(g.space, x, lo, hi) !== expectedAt(g, loop, times, q)) return void (g.valid = false);
    if (writes && accesses.last(g.space, x) >= hi) {
      if (g.step !== 0 && q < loop.count) g.storeEach = true;
      else g.storeAfter = true;
    }
  }
}

/** How many accesses one iteration makes through each member of the group. */
function timesOf(g: Group, occ: readonly Occurrence[]): number[] {
  return g.members.map((m) => occ.reduce((n, o) => n + (o.space === g.space && m.slots.includes(o.slot) ? o.times : 0), 0));
}

/** How many accesses of y(q) one run of the loop makes through the group's members. */
function expectedAt(g: Group, loop: Loop, times: readonly number[], q: number): number {
  let n = 0;
  g.members.forEach((m, i) => {
    if (g.step === 0) n += loop.count * times[i];
    else if (q - m.u >= 0 && q - m.u < loop.count) n += times[i];
  });
  return n;
}
