/**
 * The page's script (bundled by browser.test.ts as ESM and as IIFE): compute, and
 * write the results, or the error, into <pre id="out"> for `chromium --dump-dom`.
 */
import { compute } from "./compute.js";

interface Out {
  textContent: string | null;
}
const out = (globalThis as unknown as { document: { getElementById(id: string): Out } }).document.getElementById("out");
try {
  out.textContent = encodeURIComponent(JSON.stringify({ ok: true, results: compute() }));
} catch (e) {
  out.textContent = encodeURIComponent(JSON.stringify({ ok: false, error: String((e as Error).stack ?? e) }));
}
