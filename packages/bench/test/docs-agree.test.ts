/**
 * The READMEs agree on how long `pnpm bench` takes, with each other and with `--help`
 * (cli.ts's RUN_TIME), and the full run of the committed results lies in the range they
 * state. (README.md said about six minutes, packages/bench/README.md under fifteen.)
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RUN_TIME } from "../src/cli.js";
import type { BenchResults } from "../src/results.js";

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");
const DOCS = ["README.md", "packages/bench/README.md"];
/** Every claim of a duration in minutes: "about a minute", "under 15 minutes", "about 5–7 minutes". */
const CLAIM = /\b(?:about|under|over|within|up to) (?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|[\d.]+(?:[–-][\d.]+)?) minutes?\b/g;

describe("the run time of pnpm bench", () => {
  it.each(DOCS)("%s states the full and the quick run's time as --help does, and no other", (file) => {
    // prose wraps anywhere: one space for each run of whitespace
    const text = read(file).replace(/\s+/g, " ");
    for (const time of [RUN_TIME.full, RUN_TIME.quick]) expect(text.includes(time), `${file} should say "${time}"`).toBe(true);
    expect([...new Set(text.match(CLAIM))].sort()).toEqual([RUN_TIME.full, RUN_TIME.quick].sort());
  });

  it("the committed full run lies in the range stated", () => {
    const { meta } = JSON.parse(read("packages/bench/results/latest.json")) as BenchResults;
    expect(meta.mode).toBe("full");
    const [lo, hi] = /(\d+)–(\d+) minutes/.exec(RUN_TIME.full)!.slice(1).map(Number);
    expect(meta.seconds / 60).toBeGreaterThanOrEqual(lo);
    expect(meta.seconds / 60).toBeLessThanOrEqual(hi);
  });
});
