/**
 * Register promotion (jit/registers.ts): a loop that keeps variables in locals computes
 * what the same code over the arrays computes, on random programs of nested loops whose
 * statements define, read, update and carry variables of two arrays; and on the traces it
 * is for, the loops of rosenbrock's gradient touch the arrays only for what crosses them
 * (counted in the generated source). A range of v read and written in another array
 * (an alias: inputs read in place, outputs written into the array returned) gives the
 * same numbers, and an access reaching across its edge is reported.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { valueAndGrad } from "../../src/index.js";
import { trace } from "../../src/api/tracing.js";
import { compileReplay } from "../../src/jit/gradient.js";
import { Accesses, planRegisters, type Space, type Use } from "../../src/jit/registers.js";
import { reroll, Shapes, Statements, type Stmt } from "../../src/jit/reroll.js";
import { chunkSources, writeChunks, type Template } from "../../src/jit/source.js";
import { rosenbrock as rosen } from "../helpers/cases.js";
import { pieces, unrolled, type Piece } from "../helpers/programs/statements.js";

/**
 * Statement shapes, each as its accesses: slot 0 is the variable written (or updated),
 * the others are read. Index kinds: 0 a new variable, 1 a recent one, 2 one fixed for
 * the whole program, 3 the next input.
 */
const SHAPES: readonly { uses: readonly Use[]; kinds: readonly number[] }[] = [
  // v[new] = f(v[recent], v[fixed])
  { uses: [{ space: "v", slot: 1, mode: "read" }, { space: "v", slot: 2, mode: "read" }, { space: "v", slot: 0, mode: "write" }], kinds: [0, 1, 2] },
  // ct[fixed] += f(v[recent])  (an accumulator)
  { uses: [{ space: "v", slot: 1, mode: "read" }, { space: "ct", slot: 0, mode: "update" }], kinds: [2, 1] },
  // ct[new] = f(ct[recent], v[input])  (a chain carried from one iteration to the next)
  { uses: [{ space: "ct", slot: 1, mode: "read" }, { space: "v", slot: 2, mode: "read" }, { space: "ct", slot: 0, mode: "write" }], kinds: [0, 1, 3] },
  // ct[recent] += f(v[new-ish])  (an update of a recent variable)
  { uses: [{ space: "v", slot: 1, mode: "read" }, { space: "ct", slot: 0, mode: "update" }], kinds: [1, 1] },
];

const N = 4000;

/** The statements of a program, unrolled: indices move with the loops as a trace's do. */
function statements(ps: readonly Piece[], shapes: Shapes): Stmt[] {
  const out: Stmt[] = [];
  let next = 200;
  let input = 0;
  unrolled(ps, ({ shape, back }) => {
    const idx = SHAPES[shape].kinds.map((k) => (k === 0 ? next : k === 1 ? Math.max(0, next - back) : k === 2 ? 7 + shape : 100 + (input++ % 100)));
    if (SHAPES[shape].kinds[0] === 0) next++;
    out.push({ kind: "stmt", sig: shapes.of(`s${shape}`), idx });
  });
  return out;
}

/** Each shape's code: the written variable gets a mix of what it reads (and its shape number). */
const template: Template = (sig, at) => {
  const { uses } = SHAPES[sig];
  const reads = uses.filter((u) => u.mode === "read").map((u) => at(u.space, u.slot, u.mode));
  const w = uses.find((u) => u.mode !== "read")!;
  return `${at(w.space, w.slot, w.mode)} ${w.mode === "update" ? "+=" : "="} ${reads.map((r, k) => `${0.5 + k} * ${r}`).join(" + ")} + ${sig + 1};`;
};

/** Runs the program's code on copies of the arrays; returns them. */
function run(sources: readonly string[], v0: Float64Array, ct0: Float64Array): [Float64Array, Float64Array] {
  const v = v0.slice();
  const ct = ct0.slice();
  for (const s of sources) new Function("v", "ct", s)(v, ct);
  return [v, ct];
}

describe("register promotion", () => {
  it("random nested loops: the variables read after the program are the same, to the bit", () => {
    let promoted = 0;
    fc.assert(
      fc.property(
        pieces({ shapes: SHAPES.length, count: 7, depth: 3 }),
        fc.array(fc.nat(N - 1), { maxLength: 30 }),
        fc.array(fc.nat(N - 1), { maxLength: 30 }),
        (ps, liveV, liveCt) => {
          // statement shapes interned first, so that their ids are their places in SHAPES
          const shapes = new Shapes();
          SHAPES.forEach((_, k) => shapes.of(`s${k}`));
          const program = statements(ps, shapes);
          const usesOf = (sig: number) => SHAPES[sig].uses;
          const nodes = reroll(program, shapes);
          const used = (space: Space, xs: number[]) => xs.map((x) => ({ space, x }));
          // variables the program itself touches, and some it does not, are read after it
          const touched = program.flatMap((s) => s.idx);
          const live = [
            ...used("v", [...liveV, ...touched.filter((_, k) => k % 3 === 0)]),
            ...used("ct", [...liveCt, ...touched.filter((_, k) => k % 2 === 0)]),
          ];
          const { groups, inMemory } = planRegisters([nodes], usesOf, new Accesses(N, [Statements.of(program)], usesOf, live));
          for (const gs of groups.values()) promoted += gs.length;
          const v0 = Float64Array.from({ length: N }, (_, i) => Math.sin(i));
          const ct0 = Float64Array.from({ length: N }, (_, i) => Math.cos(i));
          const [v1, ct1] = run(chunkSources(nodes, template), v0, ct0);
          // variables said to live in locals only are NaN in the arrays: a read of one would show
          const poison = (xs: Float64Array) => xs.map((x, i) => (inMemory[i] ? x : NaN));
          const [v2, ct2] = run(chunkSources(nodes, template, groups), poison(v0), poison(ct0));
          for (const { space, x } of live) expect(space === "v" ? v2[x] : ct2[x]).toBe(space === "v" ? v1[x] : ct1[x]);
          // … and are never written there
          const written = [];
          for (let x = 0; x < N; x++) if (!inMemory[x] && !(Number.isNaN(v2[x]) && Number.isNaN(ct2[x]))) written.push(x);
          expect(written).toEqual([]);
        },
      ),
      { numRuns: 300, seed: 17 },
    );
    // the property is not vacuous: loops did keep variables in locals
    expect(promoted).toBeGreaterThan(100);
  });

  it("an alias: a range of v held in another array gives the same numbers there and elsewhere, or its edge is reported crossed", () => {
    let held = 0;
    let crossed = 0;
    fc.assert(
      fc.property(pieces({ shapes: SHAPES.length, count: 7, depth: 3 }), fc.nat(N - 1), fc.nat(300), (ps, start, span) => {
        const shapes = new Shapes();
        SHAPES.forEach((_, k) => shapes.of(`s${k}`));
        const program = statements(ps, shapes);
        const usesOf = (sig: number) => SHAPES[sig].uses;
        const nodes = reroll(program, shapes);
        const touched = program.flatMap((s) => s.idx);
        // the range starts at a variable the program touches, most of the time
        const lo = touched.length > 0 && start % 4 > 0 ? touched[start % touched.length] : start;
        const alias = { start: lo, length: Math.min(span + 1, N - lo), name: "A" };
        const live = [...new Set(touched)].map((x) => ({ space: "v" as const, x }));
        const { groups } = planRegisters([nodes], usesOf, new Accesses(N, [Statements.of(program)], usesOf, live));
        const v0 = Float64Array.from({ length: N }, (_, i) => Math.sin(i));
        const ct0 = Float64Array.from({ length: N }, (_, i) => Math.cos(i));
        const [v1] = run(chunkSources(nodes, template, groups), v0, ct0);
        const { sources, straddled } = writeChunks(nodes, template, { plans: groups, aliases: [alias] });
        if (straddled.has("A")) {
          crossed++;
          return;
        }
        // the range is NaN in v: a read of it there would show, and it is never written there
        const v = v0.map((x, i) => (i >= alias.start && i < alias.start + alias.length ? NaN : x));
        const A = v0.slice(alias.start, alias.start + alias.length);
        const ct = ct0.slice();
        for (const s of sources) new Function("v", "ct", "A", s)(v, ct, A);
        for (const { x } of live) {
          const inside = x >= alias.start && x < alias.start + alias.length;
          if (inside) held++;
          expect(inside ? A[x - alias.start] : v[x]).toBe(v1[x]);
          if (inside) expect(v[x]).toBeNaN();
        }
      }),
      { numRuns: 300, seed: 29 },
    );
    // not vacuous: aliases held variables the code touched, and some edges were crossed
    expect(held).toBeGreaterThan(1000);
    expect(crossed).toBeGreaterThan(10);
  });

  it("rosenbrock's loops touch the arrays only for what crosses them (counted, at n = 100 and 10^4)", () => {
    for (const n of [100, 10000]) {
      const t = trace("test", rosen as never, Array.from({ length: n }, (_, i) => 0.5 * Math.cos(i)), {}, "replay");
      const { source, stats } = compileReplay(t.term, t.trace.guards, true)!;
      expect(stats.locals).toBeGreaterThan(0);
      // the body of the loop over the terms (the longest but the input loop's n: the first and last few terms' code differs)
      const body = (code: string): string => {
        const counts = [...code.matchAll(/< (\d+); r0\+\+\) \{/g)].map((m) => Number(m[1])).filter((c) => c < n);
        const at = code.indexOf(`< ${Math.max(...counts)}; r0++) {`);
        expect(Math.max(...counts)).toBeGreaterThan(n - 10);
        return code.slice(at, code.indexOf("\n}", at));
      };
      // (x: the inputs, read in place from the caller's array)
      const arrays = (code: string): number => (code.match(/\b(?:v|ct|g|x)\[/g) ?? []).length;
      // forward: x[i+1] loaded; t = x[i+1] − x[i]² and 1 − x[i] are not stored: the reverse
      // sweep computes them again from x[i] and x[i+1] (program.ts reverseRemat)
      expect(arrays(body(source.forward.join("\n")))).toBe(1);
      // reverse: x[i] loaded (x[i+1] kept from the iteration before), x[i]'s cotangent stored (into the gradient, g)
      expect(arrays(body(source.reverse.join("\n")))).toBe(2);
      expect(source.reverse.join("\n")).toContain("(1 - p");
      // the gradient alone: no forward loop at all (the sum's chain is not computed, nothing is stored)
      const alone = compileReplay(t.term, t.trace.guards, true, { value: false })!;
      expect(alone.source.forward.join("\n")).not.toContain("for (");
      expect(arrays(body(alone.source.reverse.join("\n")))).toBe(2);
      const x = Array.from({ length: n }, (_, i) => Math.sin(i));
      const [value, g] = compileReplay(t.term, t.trace.guards, true)!.replay(x)!;
      const [none, g2] = alone.replay(x)!;
      expect(none).toBeNaN();
      const [value0, g0] = valueAndGrad(rosen as never, x) as [number, number[]];
      expect(value).toBe(value0);
      g0.forEach((gi, i) => expect([Object.is(g[i], gi), Object.is(g2[i], gi)]).toEqual([true, true]));
    }
  });
});
