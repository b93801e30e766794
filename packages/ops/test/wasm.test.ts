/** The assembler: LEB128 as the specification's examples have it, and a module that runs. */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { assemble, f64, f64x2, forLoop, i32, instantiate, local, sleb, type, uleb, v128 } from "../src/tensor/wasm.js";
import { gemmModule } from "../src/tensor/simd-gemm.js";
import { elementwiseModule } from "../src/tensor/simd-elementwise.js";

describe("wasm assembler", () => {
  it("encodes LEB128", () => {
    expect(uleb(0)).toEqual([0]);
    expect(uleb(127)).toEqual([0x7f]);
    expect(uleb(128)).toEqual([0x80, 0x01]);
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(sleb(0)).toEqual([0]);
    expect(sleb(63)).toEqual([0x3f]);
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(-64)).toEqual([0x40]);
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
  });

  it("a loop with scalar and vector instructions computes what it says", () => {
    // axpy(x, y, n): y[i] += 2·x[i] for i < n (n even, by vectors), then y[0] += x[0] by scalars
    const [X, Y, N, I] = [0, 1, 2, 3];
    const two = f64x2.add(v128.load64Splat(i32.const(0)), v128.load64Splat(i32.const(0)));
    const at = (base: number) => i32.add(local.get(base), i32.mul(local.get(I), i32.const(8)));
    const bytes = assemble([
      {
        name: "axpy",
        params: [type.i32, type.i32, type.i32],
        locals: [type.i32],
        body: [
          forLoop(I, local.get(N), 2, [v128.store(at(Y), f64x2.add(v128.load(at(Y)), f64x2.mul(two, v128.load(at(X)))))]),
          f64.store(local.get(Y), f64.add(f64.load(local.get(Y)), f64.mul(f64.load(local.get(X)), f64.load(i32.const(0), 0)))),
        ],
      },
    ]);
    const { memory, exports } = instantiate(bytes);
    const heap = new Float64Array(memory.buffer);
    heap[0] = 1; // the constant 1, at address 0
    const x = [1, 2, 3, 4];
    const y = [10, 20, 30, 40];
    heap.set(x, 1);
    heap.set(y, 5);
    (exports.axpy as (x: number, y: number, n: number) => void)(8, 40, 4);
    expect(Array.from(heap.subarray(5, 9))).toEqual([13, 24, 36, 48]);
  });

  it("the gemm module validates", () => {
    expect(() => instantiate(gemmModule())).not.toThrow();
  });

  it("the elementwise module validates", () => {
    expect(() => instantiate(elementwiseModule())).not.toThrow();
  });
});

describe("the ArrayBufferDetaching protector", () => {
  it("is settled when ops is loaded, before a workspace first grows (V8 deoptimized every hot function there)", () => {
    // a fresh process: loading ops detaches a buffer at once; growing a workspace later detaches nothing new for V8
    const script = `await import(${JSON.stringify(pathToFileURL(resolve(__dirname, "../dist/index.js")).href)}); console.log("loaded");`;
    const r = spawnSync(process.execPath, ["--trace-protector-invalidation", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.status).toBe(0);
    const out = r.stdout.split("\n");
    expect(out.indexOf("Invalidating protector cell ArrayBufferDetaching")).toBeGreaterThanOrEqual(0);
    expect(out.indexOf("Invalidating protector cell ArrayBufferDetaching")).toBeLessThan(out.indexOf("loaded"));
  });
});
