/**
 * Debian's Chromium for the tests that run a page in a real browser (core's
 * browser.test.ts, the playground's test): where it is, the flags that keep it from
 * reaching the network or its own services, a fresh profile per run, and whether to skip.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = "/usr/bin/chromium";

/** Headless, no sandbox (root in CI), no GPU, nothing fetched or synced in the background. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const chromiumPresent = existsSync(CHROMIUM);

/** Whether `test` skips: in CI a missing browser fails the test instead; elsewhere it is skipped, saying why. */
export function skipWithoutChromium(test: string): boolean {
  const skip = !chromiumPresent && !process.env.CI;
  if (skip) console.warn(`${test} skipped: ${CHROMIUM} is missing (apt-get install chromium, as .ci/run does)`);
  return skip;
}

/** A fresh profile directory (--user-data-dir), and its removal. */
export function freshProfile(): { readonly dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "wengert-chromium-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
