/**
 * The page's script (bundled by browser.test.ts as ESM and as IIFE): compute (reals
 * only when the URL asks `?reals`), and write the results, or the error, into
 * <pre id="out"> for `chromium --dump-dom`.
 */
import { computeReals, computeTensors, type Results } from "./compute.js";

interface Out {
  textContent: string | null;
}
const page = globalThis as unknown as { document: { getElementById(id: string): Out }; location: { search: string } };
const out = page.document.getElementById("out");
try {
  const results: Results = { reals: computeReals(), tensors: page.location.search === "?reals" ? undefined : computeTensors() };
  out.textContent = encodeURIComponent(JSON.stringify({ ok: true, results }));
} catch (e) {
  out.textContent = encodeURIComponent(JSON.stringify({ ok: false, error: String((e as Error).stack ?? e) }));
}
