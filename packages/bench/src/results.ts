/** @file The results of a run: everything the table, the SVG and latest.json are made from. */

export type Column = "primal" | "hand" | "wengert" | "wengert-compiled" | "tfjs-cpu" | "tfjs-wasm" | "jax-eager" | "jax-jit";
export const COLUMNS: readonly Column[] = ["primal", "hand", "wengert", "wengert-compiled", "tfjs-cpu", "tfjs-wasm", "jax-eager", "jax-jit"];
export const PEER_COLUMNS: readonly Column[] = ["tfjs-cpu", "tfjs-wasm", "jax-eager", "jax-jit"];

export const COLUMN_TITLES: Record<Column, string> = {
  primal: "primal (JS)",
  hand: "hand-written",
  wengert: "wengert",
  "wengert-compiled": "wengert compiled",
  "tfjs-cpu": "TF.js cpu",
  "tfjs-wasm": "TF.js wasm",
  "jax-eager": "jax-js eager",
  "jax-jit": "jax-js jit",
};

/**
 * ok: checked and timed. wrong answer: disagreed with the hand-written gradient (not
 * timed). failed: threw (the error text is the note). skipped: too slow for the
 * budget. unsupported: the candidate cannot do this workload (yet).
 */
export type Status = "ok" | "wrong answer" | "failed" | "skipped" | "unsupported";

export interface CandidateResult {
  /** Unique within its workload: the column, plus "/variant" for a second peer form. */
  readonly id: string;
  readonly column: Column;
  /** "" for the main form; e.g. "per element". */
  readonly variant: string;
  readonly precision: "float64" | "float32";
  readonly status: Status;
  readonly note?: string;
  /** Median time per call over all benchmark.js samples (ms). */
  readonly medianMs?: number;
  readonly minSampleMs?: number;
  readonly maxSampleMs?: number;
  /** Number of benchmark.js samples (each the mean of a cycle of calls) and rounds. */
  readonly samples?: number;
  readonly rounds?: number;
  /** The first (cold) call at full size, used for the check (ms). */
  readonly firstCallMs?: number;
  /** Time per call extrapolated from the reduced size (ms), where a probe was run. */
  readonly estimatedMs?: number;
  /** Error relative to the hand-written gradient (max abs difference / max |hand|), and the tolerance. */
  readonly error?: number;
  readonly tolerance?: number;
  readonly ratioToPrimal?: number;
  readonly ratioToHand?: number;
  /** "paired": medianMs is the time per call over paired rounds (paired.ts), the ratios medians of per-round ratios; else benchmark.js's. */
  readonly timing?: "paired";
}

export interface WorkloadResult {
  readonly id: string;
  readonly family: string;
  readonly title: string;
  readonly what: string;
  readonly size: number;
  readonly sizeName: string;
  /** The primal's value (the loss). */
  readonly value: number;
  readonly variants: readonly { readonly label: string; readonly note?: string }[];
  readonly float32Tolerance?: { readonly tol: number; readonly reason: string };
  readonly candidates: readonly CandidateResult[];
  /** Where the row's short candidates were timed again in paired rounds: how many, of blocks of how many ms. */
  readonly paired?: { readonly rounds: number; readonly blockMs: number; readonly maxMs: number; readonly rowMs: number; readonly short?: boolean };
}

export interface MemoryResult {
  /** Bytes per recorded instruction: heap + array-buffer growth while a W5 trace of `steps` steps is alive. */
  readonly trace: {
    readonly steps: number;
    readonly instructions: number;
    readonly primitives: number;
    readonly bytes: number;
    readonly bytesPerInstruction: number;
    /** Outgrown tape columns the trace left in the pool of reusable buffers (not counted in `bytes`). */
    readonly pooledBytes?: number;
    readonly ms: number;
  };
  /** Calls of grad on reals (W1). */
  readonly retention: Retention;
  /** Calls of grad on tensors (W2), the pool of tensor buffers counted. */
  readonly tensorRetention?: Retention;
  readonly gc: "exposed" | "flag set at run time";
}

/** Heap after every tenth of `calls` calls of grad (bytes above the start), after gc. */
export interface Retention {
  readonly calls: number;
  readonly fn: string;
  /** What one call's trace would keep, if it were kept. */
  readonly traceBytesEstimate: number;
  readonly heap: readonly { readonly calls: number; readonly bytes: number }[];
  readonly growthBytes: number;
  readonly bytesPerCall: number;
  readonly flat: boolean;
}

/** GradBench evals: derivative time over primal time (ADBench's headline metric), as a Markdown table. */
export interface GradBenchSection {
  readonly table: string;
  readonly rows: readonly unknown[];
}

/** A section after the workloads (scan-bench.ts, tape-floor.ts): its Markdown, and the measurements it was made from. */
export interface Section {
  readonly markdown: string;
  readonly data: unknown;
}

export interface BenchResults {
  readonly meta: {
    readonly date: string;
    readonly mode: "quick" | "full";
    readonly node: string;
    readonly platform: string;
    readonly cpu: string;
    readonly cpus: number;
    readonly versions: Record<string, string>;
    readonly settings: Record<string, number>;
    readonly seconds: number;
    readonly notes: readonly string[];
  };
  readonly workloads: readonly WorkloadResult[];
  readonly memory?: MemoryResult;
  readonly gradbench?: GradBenchSection;
  readonly scan?: Section;
  readonly floor?: Section;
}
