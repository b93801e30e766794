/**
 * @file Checking and timing the candidates of one workload.
 *
 * Every candidate is first called once at full size and its gradient checked against
 * the hand-written one (a disagreeing candidate is reported, not timed); peers that may
 * be pathologically slow are first tried at a reduced size and skipped when the
 * extrapolated time per call exceeds the budget. Then the candidates are timed with
 * benchmark.js, round-robin (each round starting one candidate later), all in this
 * process; the median is taken over all of a candidate's samples. A row whose
 * hand-written call takes microseconds is then timed again in paired rounds
 * (paired.ts), which give its times and ratios.
 */
import { createRequire } from "node:module";
import { formatMs } from "./report/format.js";
import { FLOAT32_TOLERANCE, FLOAT64_TOLERANCE, relativeError, toVec } from "./check.js";
import type { CandidateResult, Column, Status, WorkloadResult } from "./results.js";
import { isUnsupported, type Builder, type Jax, type Tf, type Workload } from "./types.js";
import { median } from "./interleaved.js";
import { pairedRatio, pairedRounds } from "./paired.js";

const require = createRequire(import.meta.url);
const Benchmark = require("benchmark") as typeof import("benchmark");

export interface Settings {
  /** Rounds of benchmark.js runs per candidate (interleaved). */
  readonly rounds: number;
  /** benchmark.js maxTime per run (s). */
  readonly maxTime: number;
  /** benchmark.js minSamples per run. */
  readonly minSamples: number;
  /** benchmark.js minTime (s): the shortest cycle. */
  readonly minTime: number;
  /** Warm-up after the check: calls for up to this long (s) ... */
  readonly warmup: number;
  /** ... and at most this many calls. */
  readonly warmupCalls: number;
  /** A candidate whose call takes longer than this (s) is skipped as too slow. */
  readonly maxCall: number;
  /** A candidate whose first call (compilation included) would take longer (s) is skipped. */
  readonly maxFirstCall: number;
  /** Candidates slower than this (s per call) are timed in one benchmark.js run only. */
  readonly slowCall: number;
  /** Rows whose hand-written call takes less than this (ms) are timed again in paired rounds (paired.ts) ... */
  readonly shortRow: number;
  /** ... this many rounds ... */
  readonly pairedRounds: number;
  /** ... of blocks of about this many ms of calls per candidate ... */
  readonly pairedBlock: number;
  /** ... of those whose call takes less than this (ms); the others keep benchmark.js's time. */
  readonly pairedMax: number;
}


export const QUICK: Settings = {
  rounds: 2,
  maxTime: 0.12,
  minSamples: 3,
  minTime: 0.01,
  warmup: 0.1,
  warmupCalls: 10,
  maxCall: 0.5,
  maxFirstCall: 3,
  slowCall: 0.25,
  shortRow: 1,
  pairedRounds: 9,
  pairedBlock: 5,
  pairedMax: 1,
};

export const FULL: Settings = {
  rounds: 4,
  maxTime: 0.6,
  minSamples: 5,
  minTime: 0.02,
  warmup: 0.5,
  warmupCalls: 50,
  maxCall: 8,
  maxFirstCall: 30,
  slowCall: 0.5,
  shortRow: 1,
  pairedRounds: 25,
  pairedBlock: 10,
  pairedMax: 1,
};

export interface Peers {
  readonly tf?: Tf;
  /** TF.js backends that initialised; those that did not, with their error. */
  readonly tfBackends: readonly { readonly name: "cpu" | "wasm"; readonly error?: string }[];
  readonly tfError?: string;
  readonly useTfBackend?: (name: string) => Promise<void>;
  readonly jax?: Jax;
  readonly jaxError?: string;
}

interface Candidate {
  readonly id: string;
  readonly column: Column;
  readonly variant: string;
  readonly precision: "float64" | "float32";
  readonly kind: "primal" | "gradient";
  /** Set-up before each block of calls (a TF.js backend). */
  readonly enter?: () => Promise<void>;
  /** Dispose of what a reduced-size trial created. */
  readonly scope?: (f: () => void) => void;
  readonly run?: () => unknown;
  readonly build?: (size: number) => () => unknown;
  readonly probeSizes?: readonly number[];
  readonly unsupported?: string;
  readonly failed?: string;
}

interface State {
  status: Status | "pending";
  note?: string;
  fn?: () => unknown;
  firstCallMs?: number;
  estimatedMs?: number;
  error?: number;
  tolerance?: number;
  samples: number[];
  rounds: number;
  slow: boolean;
}

/** Where benchmarked results go so that no call is dead code. */
export let sink: unknown;

const now = () => performance.now();

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split("\n")[0].trim();

/** The first line of an error, with its class name, at most 300 characters. */
export function errorText(e: unknown): string {
  const line = e instanceof Error ? `${e.name}: ${messageOf(e)}` : messageOf(e);
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

export const formatSeconds = (s: number): string => formatMs(s * 1000);

function candidatesOf(w: Workload, peers: Peers): Candidate[] {
  const list: Candidate[] = [
    { id: "primal", column: "primal", variant: "", precision: "float64", kind: "primal", run: w.primal },
    { id: "hand", column: "hand", variant: "", precision: "float64", kind: "gradient", run: w.hand },
    isUnsupported(w.wengert)
      ? { id: "wengert", column: "wengert", variant: "", precision: "float64", kind: "gradient", unsupported: w.wengert.unsupported }
      : { id: "wengert", column: "wengert", variant: "", precision: "float64", kind: "gradient", run: w.wengert },
  ];
  if (w.wengertCompiled) {
    list.push({
      id: "wengert-compiled",
      column: "wengert-compiled",
      variant: "",
      precision: "float64",
      kind: "gradient",
      run: w.wengertCompiled,
    });
  }
  for (const v of w.peers) {
    const suffix = v.label ? `/${v.label}` : "";
    const peer = <L>(
      column: Column,
      lib: L | undefined,
      libError: string | undefined,
      b: Builder<L> | { unsupported: string } | undefined,
      extra: Partial<Candidate> = {},
    ): void => {
      const base = { id: column + suffix, column, variant: v.label, precision: "float32" as const, kind: "gradient" as const };
      if (b === undefined) list.push({ ...base, unsupported: "not written for this workload" });
      else if (isUnsupported(b)) list.push({ ...base, unsupported: b.unsupported });
      else if (lib === undefined) list.push({ ...base, failed: libError ?? "library not loaded" });
      else list.push({ ...base, build: (size) => b(lib, size), ...(v.probeSizes !== undefined && { probeSizes: v.probeSizes }), ...extra });
    };
    const tf = peers.tf;
    for (const name of ["cpu", "wasm"] as const) {
      const backend = peers.tfBackends.find((x) => x.name === name);
      const column: Column = `tfjs-${name}`;
      const err = peers.tfError ?? (backend === undefined ? `backend ${name} not registered` : backend.error);
      peer(column, err === undefined ? tf : undefined, err, v.tfjs, {
        enter: () => peers.useTfBackend!(name),
        scope: (f) => {
          tf!.tidy(() => {
            f();
          });
        },
      });
    }
    peer("jax-eager", peers.jax, peers.jaxError, v.jaxEager);
    peer("jax-jit", peers.jax, peers.jaxError, v.jaxJit);
  }
  return list;
}

/**
 * Try a peer at the reduced sizes of its ladder (ascending), to find out, in a fraction
 * of the time, whether the full size would take too long. Each rung times a first call
 * and the better of two more. Costs grow at least linearly with the size, so a call
 * already too slow at a reduced size means the full size is too slow. The next rung and
 * the full size are predicted with the growth exponent seen between the first and the
 * last rung run so far (between 1 and 3: jax-js's eager grad and its jit tracing grow
 * faster than linearly); from one rung, a first call much slower than the next
 * (tracing, compiling) is taken to grow quadratically. A rung predicted beyond the
 * budget is not run.
 * An error at a rung is the candidate's failure (a stack overflow shows itself there).
 */
function probe(c: Candidate, w: Workload, settings: Settings): { skip?: string; estimatedMs?: number } {
  const rungs: { size: number; cold: number; warm: number }[] = [];
  const budget = Math.max(settings.maxFirstCall, 10) * 1000;
  const at = (n: number) => `${w.sizeName}=${n}`;
  const tooSlow = (ms: number, how: string) => ({
    estimatedMs: ms,
    skip: `too slow: > ${formatSeconds(settings.maxCall)} per call (≈ ${formatMs(ms)}, ${how})`,
  });
  const from = () => `${rungs.map((r) => `${formatMs(r.warm)} at ${at(r.size)}`).join(", ")}`;
  for (const size of c.probeSizes!) {
    if (size >= w.size) break;
    const prev = rungs[rungs.length - 1];
    if (prev) {
      const ratio = size / prev.size;
      // Growth so far (at least linear), from the first rung to the last.
      const grown = (a: number, b: number) =>
        rungs.length < 2 || a <= 0 || b <= 0 ? 1 : Math.min(3, Math.max(1, Math.log(b / a) / Math.log(prev.size / rungs[0].size)));
      const eWarm = grown(rungs[0].warm, prev.warm);
      const warmNext = prev.warm * ratio ** eWarm;
      if (warmNext > settings.maxCall * 1000) {
        return tooSlow(prev.warm * (w.size / prev.size) ** eWarm, `extrapolated ${eWarm === 1 ? "linearly" : `as size^${eWarm.toFixed(2)}`} from ${from()}`);
      }
      const compiles = prev.cold > 3 * prev.warm;
      const eCold = rungs.length >= 2 ? grown(rungs[0].cold, prev.cold) : compiles ? 2 : 1;
      const predicted = prev.cold * ratio ** eCold;
      if (predicted > budget) {
        return {
          skip:
            `too slow: first call (tracing/compiling) would take ≈ ${formatMs(predicted)} already at ${at(size)} ` +
            `(${formatMs(prev.cold)} at ${at(prev.size)}, extrapolated as size^${eCold.toFixed(2)})`,
        };
      }
    }
    let cold = 0;
    let warm = 0;
    const run = () => {
      const fn = c.build!(size);
      let t = now();
      sink = fn();
      cold = now() - t;
      warm = Infinity;
      for (let k = 0; k < 2; k++) {
        t = now();
        sink = fn();
        warm = Math.min(warm, now() - t);
      }
    };
    try {
      if (c.scope) c.scope(run);
      else run();
    } catch (e) {
      throw Object.assign(new Error(`${messageOf(e)} (at ${at(size)}, a reduced size tried first; not tried at ${at(w.size)})`), {
        name: e instanceof Error ? e.name : "Error",
      });
    }
    rungs.push({ size, cold, warm });
    if (warm > settings.maxCall * 1000) return tooSlow(warm * (w.size / size), `at least: extrapolated linearly from ${from()}`);
  }
  if (rungs.length === 0) return {};
  const last = rungs[rungs.length - 1];
  const first = rungs[0];
  const exponent = (a: number, b: number) =>
    rungs.length < 2 || a <= 0 || b <= 0 ? 1 : Math.min(3, Math.max(1, Math.log(b / a) / Math.log(last.size / first.size)));
  const scale = w.size / last.size;
  const eWarm = exponent(first.warm, last.warm);
  const warmMs = last.warm * scale ** eWarm;
  const coldMs = last.cold * scale ** exponent(first.cold, last.cold);
  if (warmMs > settings.maxCall * 1000) return tooSlow(warmMs, `extrapolated ${eWarm === 1 ? "linearly" : `as size^${eWarm.toFixed(2)}`} from ${from()}`);
  if (coldMs > settings.maxFirstCall * 1000) {
    return {
      estimatedMs: warmMs,
      skip:
        `too slow: first call (tracing/compiling) > ${formatSeconds(settings.maxFirstCall)} ` +
        `(≈ ${formatMs(coldMs)}, extrapolated from ${rungs.map((r) => `${formatMs(r.cold)} at ${at(r.size)}`).join(", ")})`,
    };
  }
  return { estimatedMs: warmMs };
}

/** Check, warm up and time every candidate of `w`. `log` gets one line per step. */
export async function runWorkload(
  w: Workload,
  peers: Peers,
  settings: Settings,
  log: (line: string) => void,
  gc: () => void = () => {},
): Promise<WorkloadResult> {
  const value = w.primal();
  const reference = toVec(w.hand());
  const f32tol = w.float32Tolerance?.tol ?? FLOAT32_TOLERANCE;
  const cands = candidatesOf(w, peers);
  const states = new Map<Candidate, State>();

  // 1. Check (and probe, and warm up), one candidate at a time.
  for (const c of cands) {
    const tc = now();
    const st: State = { status: "pending", samples: [], rounds: 0, slow: false };
    states.set(c, st);
    if (c.unsupported !== undefined) {
      st.status = "unsupported";
      st.note = c.unsupported;
      continue;
    }
    if (c.failed !== undefined) {
      st.status = "failed";
      st.note = c.failed;
      continue;
    }
    try {
      await c.enter?.();
      if (c.build && c.probeSizes && c.probeSizes.length > 0) {
        const verdict = probe(c, w, settings);
        if (verdict.estimatedMs !== undefined) st.estimatedMs = verdict.estimatedMs;
        if (verdict.skip !== undefined) {
          st.status = "skipped";
          st.note = verdict.skip;
          log(`  ${c.id}: skipped (${st.note})`);
          continue;
        }
      }
      const fn = c.build ? c.build(w.size) : c.run!;
      const t0 = now();
      const out = fn();
      st.firstCallMs = now() - t0;
      if (c.kind === "gradient") {
        st.tolerance = c.precision === "float64" ? FLOAT64_TOLERANCE : f32tol;
        st.error = relativeError(toVec(out), reference);
        if (!(st.error <= st.tolerance)) {
          st.status = "wrong answer";
          st.note = `error ${st.error.toExponential(2)} relative to the hand-written ${w.what} (tolerance ${st.tolerance})`;
          log(`  ${c.id}: ${st.status} (${st.note})`);
          continue;
        }
      } else if (typeof out !== "number" || !Number.isFinite(out)) {
        throw new Error(`primal returned ${String(out)}`);
      }
      if (st.firstCallMs > settings.maxCall * 1000) {
        // Time the second call: the first may include compilation.
        const t1 = now();
        sink = fn();
        const second = now() - t1;
        if (second > settings.maxCall * 1000) {
          st.status = "skipped";
          st.note = `too slow: > ${formatSeconds(settings.maxCall)} per call (one call took ${formatSeconds(second / 1000)})`;
          st.estimatedMs = second;
          log(`  ${c.id}: ${st.status} (${st.note})`);
          continue;
        }
      }
      // Warm-up.
      const tw = now();
      let calls = 0;
      let last = st.firstCallMs;
      while (calls < settings.warmupCalls && now() - tw < settings.warmup * 1000) {
        const t = now();
        sink = fn();
        last = now() - t;
        calls++;
      }
      // the warm-up may have run out of time in a call that compiled (compileGrad's third):
      // whether a candidate is slow is judged on the call after it
      if (calls > 0) {
        const t = now();
        sink = fn();
        last = now() - t;
      }
      st.slow = last > settings.slowCall * 1000;
      st.fn = fn;
      log(`  ${c.id}: checked (error ${st.error?.toExponential(1) ?? "—"}), first call ${formatMs(st.firstCallMs)}, ready in ${formatMs(now() - tc)}`);
    } catch (e) {
      st.status = "failed";
      st.note = errorText(e);
      log(`  ${c.id}: failed (${st.note})`);
    }
  }

  // 2. Time, round-robin.
  const timed = cands.filter((c) => states.get(c)!.status === "pending");
  for (let r = 0; r < settings.rounds; r++) {
    const order = timed.map((_, i) => timed[(i + r) % timed.length]);
    for (const c of order) {
      const st = states.get(c)!;
      if (st.status !== "pending" || (st.slow && r > 0)) continue;
      await c.enter?.();
      gc(); // so that one candidate's garbage is not collected in another's time
      const fn = st.fn!;
      const bench = new Benchmark(`${w.id} ${c.id}`, () => (sink = fn()), {
        maxTime: st.slow ? 0 : settings.maxTime,
        minSamples: st.slow ? 2 : settings.minSamples,
        minTime: settings.minTime,
        initCount: 1,
      });
      const tb = now();
      bench.run({ async: false });
      if (process.env.BENCH_DEBUG) log(`    [round ${r}] ${c.id}: ${bench.stats.sample.length} samples, count ${bench.count}, ${formatMs(now() - tb)}`);
      if (bench.error) {
        st.status = "failed";
        st.note = errorText(bench.error);
        log(`  ${c.id}: failed while timing (${st.note})`);
        continue;
      }
      st.samples.push(...bench.stats.sample);
      st.rounds++;
    }
  }

  const medianMs = new Map<Candidate, number>();
  for (const c of timed) {
    const st = states.get(c)!;
    if (st.status === "pending" && st.samples.length > 0) {
      st.status = "ok";
      medianMs.set(c, median(st.samples) * 1000);
    } else if (st.status === "pending") {
      st.status = "failed";
      st.note = "no samples";
    }
  }
  // benchmark.js's medians of the primal and the hand-written call: the ratios of candidates not paired are to these
  const benchMs = (id: string) => [...medianMs].find(([c]) => c.id === id)?.[1];
  const [primalMs, handMs] = [benchMs("primal"), benchMs("hand")];
  // a row whose hand-written call is short: its candidates of under pairedMax timed again, in paired rounds
  // (paired.ts); the others (an uncached grad's milliseconds) keep benchmark.js's times, which
  // blocks interleaved with other candidates' would not improve (their pools and caches go cold)
  const paired = new Map<Candidate, { ms: number; samples: readonly number[]; toPrimal?: number; toHand?: number }>();
  // so are the fast candidates of a row whose hand-written call is long (W2: the compiled
  // gradient against jax-js's jit), compared with one another, their ratios to hand over
  // benchmark.js's hand-written median
  const short = handMs !== undefined && handMs < settings.shortRow;
  const fast = [...medianMs.keys()].filter((c) => !states.get(c)!.slow && medianMs.get(c)! < settings.pairedMax);
  const pairs = short || fast.length >= 2;
  if (pairs) {
    const rows = fast;
    const times = await pairedRounds(
      rows.map((c) => ({ run: states.get(c)!.fn!, enter: c.enter, estimateMs: medianMs.get(c)! })),
      settings.pairedRounds,
      settings.pairedBlock,
    );
    const [p, h] = [rows.findIndex((c) => c.id === "primal"), rows.findIndex((c) => c.id === "hand")];
    rows.forEach((c, k) => {
      paired.set(c, {
        ms: median(times.perRound[k]),
        samples: times.perRound[k],
        ...(p >= 0 && { toPrimal: pairedRatio(times, k, p) }),
        ...(h >= 0 && { toHand: pairedRatio(times, k, h) }),
      });
    });
    log(`  paired rounds: ${rows.map((c) => c.id).join(", ")}`);
  }

  const results: CandidateResult[] = cands.map((c) => {
    const st = states.get(c)!;
    const pc = paired.get(c);
    const m = pc?.ms ?? medianMs.get(c);
    const samples = pc ? pc.samples.map((ms) => ms / 1000) : st.samples;
    const r: CandidateResult = {
      id: c.id,
      column: c.column,
      variant: c.variant,
      precision: c.precision,
      status: st.status as Status,
      ...(st.note !== undefined && { note: st.note }),
      ...(m !== undefined && {
        medianMs: m,
        minSampleMs: Math.min(...samples) * 1000,
        maxSampleMs: Math.max(...samples) * 1000,
        samples: samples.length,
        rounds: st.rounds,
        ...(primalMs !== undefined && { ratioToPrimal: pc?.toPrimal ?? medianMs.get(c)! / primalMs }),
        ...(handMs !== undefined && { ratioToHand: pc?.toHand ?? m / handMs }),
        ...(pc && { timing: "paired" as const }),
      }),
      ...(st.firstCallMs !== undefined && { firstCallMs: st.firstCallMs }),
      ...(st.estimatedMs !== undefined && { estimatedMs: st.estimatedMs }),
      ...(st.error !== undefined && { error: st.error, tolerance: st.tolerance }),
    };
    if (m !== undefined) log(`  ${c.id}: ${formatSeconds(m / 1000)} (median of ${st.samples.length} samples)`);
    return r;
  });

  return {
    id: w.id,
    family: w.family,
    title: w.title,
    what: w.what,
    size: w.size,
    sizeName: w.sizeName,
    value,
    variants: w.peers.map((v) => ({ label: v.label, ...(v.note !== undefined && { note: v.note }) })),
    ...(w.float32Tolerance && { float32Tolerance: w.float32Tolerance }),
    candidates: results,
    ...(pairs && { paired: { rounds: settings.pairedRounds, blockMs: settings.pairedBlock, maxMs: settings.pairedMax, rowMs: settings.shortRow, short } }),
  };
}
