/** The table and SVG writers on fake results: well-formed, every status shown, text escaped. */
import { describe, expect, it } from "vitest";
import { HEADER, markdown } from "../src/report/markdown.js";
import { svg } from "../src/report/svg.js";
import { formatMs, formatRatio } from "../src/report/format.js";
import type { BenchResults, CandidateResult, Column } from "../src/results.js";

const ok = (column: Column, medianMs: number, handMs: number, primalMs: number, variant = ""): CandidateResult => ({
  id: variant ? `${column}/${variant}` : column,
  column,
  variant,
  precision: column.startsWith("tfjs") || column.startsWith("jax") ? "float32" : "float64",
  status: "ok",
  medianMs,
  samples: 12,
  rounds: 2,
  ratioToHand: medianMs / handMs,
  ratioToPrimal: medianMs / primalMs,
});

function fakeResults(): BenchResults {
  return {
    meta: {
      date: "2026-01-01T00:00:00.000Z",
      mode: "quick",
      node: "20.0.0",
      platform: "linux",
      cpu: "Fake CPU",
      cpus: 2,
      versions: { "@tensorflow/tfjs-core": "4.22.0" },
      settings: { rounds: 2 },
      seconds: 42,
      notes: ["a note with | a pipe and <angle> & ampersand"],
    },
    workloads: [
      {
        id: "W1-1000",
        family: "W1",
        title: "W1 rosenbrock n=1000",
        what: "gradient",
        size: 1000,
        sizeName: "n",
        value: 1,
        variants: [{ label: "" }],
        candidates: [
          ok("primal", 0.003, 0.005, 0.003),
          ok("hand", 0.005, 0.005, 0.003),
          ok("wengert", 1.2, 0.005, 0.003),
          ok("tfjs-cpu", 0.9, 0.005, 0.003),
          {
            id: "tfjs-wasm",
            column: "tfjs-wasm",
            variant: "",
            precision: "float32",
            status: "wrong answer",
            note: "error 3e-2 relative to the hand-written gradient (tolerance 0.001)",
          },
          {
            id: "jax-eager",
            column: "jax-eager",
            variant: "",
            precision: "float32",
            status: "failed",
            note: "RangeError: Maximum call stack size exceeded | <oops>",
          },
          {
            id: "jax-jit",
            column: "jax-jit",
            variant: "",
            precision: "float32",
            status: "skipped",
            note: "too slow: > 500 ms per call (≈ 8 s, extrapolated)",
          },
        ],
      },
      {
        id: "W2",
        family: "W2",
        title: "W2 mlp",
        what: "gradient",
        size: 64,
        sizeName: "B",
        value: 2.3,
        variants: [{ label: "" }, { label: "per element", note: "op for op" }],
        float32Tolerance: { tol: 0.01, reason: "because" },
        candidates: [
          ok("primal", 2.5, 4.7, 2.5),
          ok("hand", 4.7, 4.7, 2.5),
          { id: "wengert", column: "wengert", variant: "", precision: "float64", status: "unsupported", note: "not yet: needs tensors (issue 4)" },
          ok("tfjs-cpu", 7, 4.7, 2.5),
          ok("tfjs-wasm", 1.7, 4.7, 2.5),
          ok("jax-eager", 8.5, 4.7, 2.5),
          ok("jax-jit", 0.5, 4.7, 2.5),
          ok("tfjs-cpu", 700, 4.7, 2.5, "per element"),
          {
            id: "tfjs-wasm/per element",
            column: "tfjs-wasm",
            variant: "per element",
            precision: "float32",
            status: "skipped",
            note: "too slow: first call (tracing/compiling) would take ≈ 40 s",
          },
          { id: "jax-eager/per element", column: "jax-eager", variant: "per element", precision: "float32", status: "failed", note: "Error: cannot read" },
          { id: "jax-jit/per element", column: "jax-jit", variant: "per element", precision: "float32", status: "failed", note: "Error: cannot read" },
        ],
      },
      {
        id: "W5-100",
        family: "W5",
        title: "W5 deep chain N=100",
        what: "derivative",
        size: 100,
        sizeName: "N",
        value: 0.1,
        variants: [{ label: "" }],
        candidates: [ok("primal", 1, 1.2, 1), ok("hand", 1.2, 1.2, 1), ok("wengert", 50, 1.2, 1)],
      },
      {
        id: "W5-200",
        family: "W5",
        title: "W5 deep chain N=200",
        what: "derivative",
        size: 200,
        sizeName: "N",
        value: 0.1,
        variants: [{ label: "" }],
        candidates: [ok("primal", 2, 2.4, 2), ok("hand", 2.4, 2.4, 2), ok("wengert", 101, 2.4, 2)],
      },
    ],
    memory: {
      trace: { steps: 1000000, instructions: 4000003, primitives: 4000000, bytes: 75000000, bytesPerInstruction: 18.75, ms: 400 },
      retention: {
        calls: 10000,
        fn: "grad(f, x)",
        traceBytesEstimate: 20000,
        heap: [
          { calls: 0, bytes: 0 },
          { calls: 5000, bytes: 1000 },
          { calls: 10000, bytes: 2000 },
        ],
        growthBytes: 2000,
        bytesPerCall: 0.2,
        flat: true,
      },
      tensorRetention: {
        calls: 1000,
        fn: "W2's grad",
        traceBytesEstimate: 300000,
        heap: [
          { calls: 0, bytes: 0 },
          { calls: 1000, bytes: 40000000 },
        ],
        growthBytes: 40000000,
        bytesPerCall: 40000,
        flat: false,
      },
      gc: "exposed",
    },
  };
}

/** Cells of a Markdown table row, splitting on unescaped pipes. */
const cells = (line: string) => line.trim().slice(1, -1).split(/(?<!\\)\|/);

describe("markdown", () => {
  const md = markdown(fakeResults());
  const lines = md.split("\n");
  const tableLines = lines.filter((l) => l.startsWith("|"));
  const main = tableLines.slice(0, 2 + 4); // header, rule, W1, W2, W2 per element, W5-100 ...

  it("has one header, one rule and one row per workload and peer form, all with the same number of cells", () => {
    expect(cells(main[0]).map((c) => c.trim())).toEqual(HEADER);
    expect(main[1]).toMatch(/^\|(-+\|)+$/);
    const first = lines.indexOf(main[0]);
    const body = lines.slice(first + 2).filter((l, i, a) => l.startsWith("|") && a.slice(0, i).every((x) => x.startsWith("|")));
    expect(body).toHaveLength(5);
    for (const row of body) expect(cells(row)).toHaveLength(HEADER.length);
  });
  it("shows times with ratios, and every status with numbered notes", () => {
    expect(md).toContain("W1 rosenbrock n=1000");
    expect(md).toContain(`${formatMs(0.9)} (${formatRatio(0.9 / 0.005)})`);
    expect(md).toContain("wrong answer [1]");
    expect(md).toContain("failed [2]");
    expect(md).toContain("skipped (too slow: > 500 ms per call) [3]");
    expect(md).toContain("skipped (too slow to trace/compile)");
    expect(md).toContain("not yet: needs tensors (issue 4)");
    expect(md).toContain("W2 mlp, peers per element");
    expect(md).toMatch(/^1\. error 3e-2/m);
    expect(md).toContain("RangeError: Maximum call stack size exceeded \\| <oops>");
  });
  it("reports W5's linearity and the memory probe", () => {
    expect(md).toContain("time(N=200) / time(N=100)");
    expect(md).toContain("2.02"); // wengert 101 / 50
    expect(md).toContain("18.8 bytes per recorded instruction");
    expect(md).toContain("flat, nothing retained after rd returns");
    // one line per series: the tensor one here grew
    expect(md).toMatch(/1000 calls of W2's grad: .*38\.1 MiB in all .*\*\*NOT flat\*\*/);
  });
  it("lists the run's notes", () => {
    expect(md).toContain("- a note with | a pipe and <angle> & ampersand");
  });
});

/** A small well-formedness check: tags balance, attributes are quoted, no raw & or <. */
function checkXml(text: string): void {
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = tag.exec(text))) {
    const between = text.slice(last, m.index);
    expect(between).not.toMatch(/<|&(?!(amp|lt|gt|quot|apos);)/);
    last = tag.lastIndex;
    const [, close, name, , selfClose] = m;
    if (close) expect(stack.pop()).toBe(name);
    else if (!selfClose) stack.push(name);
  }
  expect(text.slice(last).trim()).toBe("");
  expect(stack).toEqual([]);
}

describe("svg", () => {
  const s = svg(fakeResults());
  it("is well-formed, one svg element with a size", () => {
    checkXml(s);
    expect(s.startsWith("<svg ")).toBe(true);
    expect(s).toMatch(/width="\d+" height="\d+"/);
    expect(s).not.toContain("NaN");
  });
  it("has a group per workload and peer form, a bar per timed candidate and the status of the others", () => {
    expect(s).toContain("W1 rosenbrock n=1000");
    expect(s).toContain("W2 mlp (peers per element)");
    expect((s.match(/<rect x="250"/g) ?? []).length).toBe(3 + 5 + 1 + 2 + 2); // W1: primal, wengert, tfjs-cpu; W2: 5; W2/per element: 1; W5s: 2 each
    expect(s).toContain("wrong answer");
    expect(s).toContain("skipped (too slow)");
    expect(s).toContain("not yet: needs tensors (issue 4)");
    expect(s).toContain("×1 = hand-written");
  });
  it("uses a log scale: ×0.1 to the next decade above the slowest ratio", () => {
    expect(s).toContain(">×0.1<");
    expect(s).toContain(">×1000<"); // 0.9 / 0.005 = 180, wengert 240 → up to 1000
  });
});
