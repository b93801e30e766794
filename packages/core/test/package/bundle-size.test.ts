/**
 * The README's figure of what `@wengert/core` costs a page ("bundles to about N kB (M kB
 * minified, G kB gzipped; esbuild …)") against a bundle of the built package made as the
 * README says a user makes one (esbuild, an ES module for the browser): each figure within
 * 10 % of the measured size, so that a change that grows the package shows up here, and the
 * README says so when it does.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const README = fileURLToPath(new URL("../../../../README.md", import.meta.url));
const ENTRY = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

/** The three sizes the README states, in kB. */
function stated(): { plain: number; minified: number; gzipped: number } {
  const text = readFileSync(README, "utf8").replace(/\s+/g, " ");
  const m = /bundles to about (\d+) kB \((\d+) kB minified, (\d+) kB gzipped/.exec(text);
  if (m === null) throw new Error("README.md no longer states the bundle's size as 'bundles to about N kB (M kB minified, G kB gzipped'");
  return { plain: Number(m[1]), minified: Number(m[2]), gzipped: Number(m[3]) };
}

async function bundle(minify: boolean): Promise<Uint8Array> {
  const r = await build({ entryPoints: [ENTRY], bundle: true, format: "esm", platform: "browser", target: "es2022", write: false, logLevel: "silent", minify });
  return r.outputFiles[0].contents;
}

describe("the README's bundle size", () => {
  it("is the size of an esbuild bundle of @wengert/core, within 10 %", async () => {
    const want = stated();
    const plain = await bundle(false);
    const minified = await bundle(true);
    const kB = (bytes: number): number => bytes / 1000;
    const got = { plain: kB(plain.length), minified: kB(minified.length), gzipped: kB(gzipSync(minified).length) };
    for (const k of ["plain", "minified", "gzipped"] as const) {
      expect(Math.abs(got[k] / want[k] - 1), `${k}: README says ${want[k]} kB, the bundle is ${got[k].toFixed(0)} kB`).toBeLessThan(0.1);
    }
  }, 60_000);
});
