/**
 * @file jax-js on its wasm backend.
 *
 * jax-js tests `data instanceof Float16Array` when making arrays, and Node 20 has no
 * Float16Array (Node 24 has): a class that nothing is an instance of stands in for it.
 * jax-js's own default dtype, float32, is used: it has float64 arrays, but its wasm
 * kernels evaluate sin and cos to about 4e-7 absolute error and exp to about 3e-6,
 * so float64 would not give float64 answers.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Jax } from "../types.js";

export interface JaxLoaded {
  readonly jax: Jax;
  readonly version: string;
}

export async function loadJax(): Promise<JaxLoaded> {
  const g = globalThis as { Float16Array?: unknown };
  if (typeof g.Float16Array === "undefined") g.Float16Array = class Float16ArrayUnavailable {};
  const jax = (await import("@jax-js/jax")) as Jax;
  const devices = await jax.init("wasm");
  if (!devices.includes("wasm")) throw new Error(`jax-js: the wasm backend did not initialise (devices: ${devices.join(", ")})`);
  jax.defaultDevice("wasm");
  return { jax, version: packageVersion("@jax-js/jax") };
}

/** The version of an installed package (jax-js's exports map hides its package.json). */
export function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve(name));
  for (let i = 0; i < 5; i++) {
    try {
      const p = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (p.name === name) return p.version ?? "?";
    } catch {
      // not here; go up
    }
    dir = dirname(dir);
  }
  return "?";
}
