/**
 * @file TF.js: tfjs-core with the cpu and wasm backends.
 *
 * tfjs-core's Node build registers no gradients (tf.grad fails with "gradient function
 * not found for Sum"); the union package @tensorflow/tfjs registers them all on the
 * same tfjs-core, so it is imported for that side effect. The wasm backend is told
 * where its .wasm files are (node_modules/@tensorflow/tfjs-backend-wasm/dist/).
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Tensor } from "@tensorflow/tfjs-core";
import type { Tf } from "../types.js";
import { quietly } from "./quiet.js";

export interface TfLoaded {
  readonly tf: Tf;
  readonly version: string;
  /** Backends that initialised, and the error of those that did not. */
  readonly backends: readonly { readonly name: "cpu" | "wasm"; readonly error?: string }[];
}

export async function loadTf(): Promise<TfLoaded> {
  return quietly(async () => {
    const tf = (await import("@tensorflow/tfjs-core")) as Tf;
    await import("@tensorflow/tfjs");
    await import("@tensorflow/tfjs-backend-cpu");
    const wasm = await import("@tensorflow/tfjs-backend-wasm");
    const require = createRequire(import.meta.url);
    wasm.setWasmPaths(join(dirname(require.resolve("@tensorflow/tfjs-backend-wasm/package.json")), "dist") + "/");
    const backends: { name: "cpu" | "wasm"; error?: string }[] = [];
    for (const name of ["cpu", "wasm"] as const) {
      try {
        if (!(await tf.setBackend(name))) throw new Error(`tf.setBackend("${name}") returned false`);
        await tf.ready();
        tf.tidy(() => tf.add(tf.scalar(1), 1).dataSync()); // first use (the cpu backend greets Node users here)
        backends.push({ name });
      } catch (e) {
        backends.push({ name, error: String(e) });
      }
    }
    return { tf, version: tf.version_core, backends };
  });
}

/** Make `name` the current backend (tensors are created on the current backend). */
export async function useTfBackend(tf: Tf, name: string): Promise<void> {
  if (tf.getBackend() !== name) await quietly(() => tf.setBackend(name));
}

/** Run `f` in a tidy scope and read its result back into a typed array, freeing the tensor. */
export function readTf(tf: Tf, f: () => Tensor): Float32Array | Int32Array | Uint8Array {
  const r = tf.tidy(f);
  const d = r.dataSync();
  r.dispose();
  return d;
}
