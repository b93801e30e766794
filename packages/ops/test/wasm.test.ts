/**
 * The assembler: LEB128 as the specification's examples have it, and a module that runs;
 * workspaces made larger without detaching a buffer.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { assemble, f64, f64x2, forLoop, i32, instantiate, local, sleb, type, uleb, v128 } from "../src/tensor/wasm.js";
import { gemmModule } from "../src/tensor/simd-gemm.js";
import { elementwiseModule } from "../src/tensor/simd-elementwise.js";
import { expModule } from "../src/tensor/simd-exp.js";

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

  it("the exp module validates", () => {
    expect(() => instantiate(expModule())).not.toThrow();
  });

  it("places data segments in the memory of each instance", () => {
    const bytes = assemble([], [{ offset: 16, bytes: new Uint8Array(new Float64Array([2.5, -1]).buffer) }, { offset: 40, bytes: Uint8Array.of(0, 0, 0, 0, 0, 0, 0xf0, 0x3f) }]);
    for (let k = 0; k < 2; k++) expect(Array.from(new Float64Array(instantiate(bytes).memory.buffer, 0, 6))).toEqual([0, 0, 2.5, -1, 0, 1]);
  });
});

describe("workspaces", () => {
  it("made larger as new instances, not grown: nothing is detached, V8's ArrayBufferDetaching protector stays intact", () => {
    // a fresh process: the SIMD kernels take operands of 8 MB each (a workspace of one page
    // made larger many times over), then checks that the numbers are still right after
    const dist = (f: string) => JSON.stringify(pathToFileURL(resolve(__dirname, "../dist/tensor", f)).href);
    const script = [
      `const { matmul, zip, ARITH, reduce } = await import(${dist("kernels.js")});`,
      "const n = 1 << 20, a = Float64Array.from({ length: n }, (_, i) => i % 7), b = Float64Array.from({ length: n }, (_, i) => i % 5);",
      "const s = zip(a, [n], b, [n], [n], ARITH.add);",
      "const c = matmul(a.subarray(0, 512 * 512), [512, 512], b.subarray(0, 512 * 512), [512, 512], [512, 512]);",
      "const sums = reduce(a, [1024, 1024], [0], 'sum');",
      "reduce(a, [n], [0], 'logsumexp');",
      "console.log('done', s[n - 1] === a[n - 1] + b[n - 1], c[0], sums[3]);",
    ].join("\n");
    const r = spawnSync(process.execPath, ["--trace-protector-invalidation", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    const lines = r.stdout.split("\n");
    let c0 = 0;
    for (let j = 0; j < 512; j++) c0 += (j % 7) * ((j * 512) % 5);
    let s3 = 0;
    for (let i = 0; i < 1024; i++) s3 += (i * 1024 + 3) % 7;
    expect(lines).toContain(`done true ${c0} ${s3}`);
    expect(r.stdout).not.toContain("ArrayBufferDetaching");
  });
});
