/**
 * @file A tiny WebAssembly assembler: named instructions in folded form, a module of
 * functions over one imported memory, and its instantiation.
 *
 * Each instruction is a function from its operands' code to its own, so a kernel reads
 * like the text format's folded S-expressions — `f64x2.add(local.get(acc), f64x2.mul(a, b))`
 * — and is written in TypeScript, in the repository, byte for byte. Only what the
 * kernels use is here; the opcodes are those of the WebAssembly 2.0 specification
 * (§5.4, with the 0xFD prefix for SIMD).
 */

/** A run of encoded instructions. */
export type Code = readonly number[];

/** Value types (spec §5.3.1). */
export const type = { i32: 0x7f, f64: 0x7c, v128: 0x7b } as const;
export type ValType = (typeof type)[keyof typeof type];

/** Unsigned LEB128. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (for i32.const). */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    const done = (n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

const seq = (...parts: Code[]): number[] => parts.flat();
/** An instruction with operands, in folded order: operands first, then the opcode. */
const op =
  (...opcode: number[]) =>
  (...operands: Code[]): Code =>
    seq(...operands, opcode);
/** A SIMD instruction: the 0xFD prefix and the opcode as LEB128. */
const simd = (n: number, ...imm: number[]) => op(0xfd, ...uleb(n), ...imm);
/** The memory immediate: alignment (log2 bytes, a hint) and a constant byte offset. */
const memarg = (align: number, offset: number): number[] => [...uleb(align), ...uleb(offset)];

export const local = {
  get: (i: number): Code => [0x20, ...uleb(i)],
  set: (i: number, value: Code): Code => seq(value, [0x21, ...uleb(i)]),
};

export const i32 = {
  const: (n: number): Code => [0x41, ...sleb(n)],
  load: (addr: Code, offset = 0): Code => seq(addr, [0x28, ...memarg(2, offset)]),
  store: (addr: Code, value: Code, offset = 0): Code => seq(addr, value, [0x36, ...memarg(2, offset)]),
  add: op(0x6a),
  sub: op(0x6b),
  mul: op(0x6c),
  ltU: op(0x49),
  and: op(0x71),
  shl: op(0x74),
  eqz: op(0x45),
  /** The low 32 bits of an i64. */
  wrapI64: op(0xa7),
};

export const f32 = {
  store: (addr: Code, value: Code, offset = 0): Code => seq(addr, value, [0x38, ...memarg(2, offset)]),
  /** A double rounded to the nearest float (IEEE, ties to even). */
  demoteF64: op(0xb6),
};

export const f64 = {
  /** The constant's eight bytes little-endian, as wasm stores them whatever the host's order. */
  const: (x: number): Code => {
    const bytes = new DataView(new ArrayBuffer(8));
    bytes.setFloat64(0, x, true);
    return [0x44, ...new Uint8Array(bytes.buffer)];
  },
  load: (addr: Code, offset = 0): Code => seq(addr, [0x2b, ...memarg(3, offset)]),
  store: (addr: Code, value: Code, offset = 0): Code => seq(addr, value, [0x39, ...memarg(3, offset)]),
  add: op(0xa0),
  sub: op(0xa1),
  mul: op(0xa2),
  div: op(0xa3),
  /** IEEE maximum (NaN if either is; −0 below 0). */
  max: op(0xa5),
  /** IEEE minimum (NaN if either is; −0 below 0). */
  min: op(0xa4),
  eq: op(0x61),
  /** `a ≤ b` as an i32 0 or 1 (0 where either is NaN). */
  le: op(0x65),
};

// 128-bit vectors are read and written at 8-byte alignment: tensors are arrays of doubles
export const v128 = {
  load: (addr: Code, offset = 0): Code => simd(0x00, ...memarg(3, offset))(addr),
  /** One double read and copied into both lanes. */
  load64Splat: (addr: Code, offset = 0): Code => simd(0x0a, ...memarg(3, offset))(addr),
  store: (addr: Code, value: Code, offset = 0): Code => simd(0x0b, ...memarg(3, offset))(addr, value),
  zero: (): Code => [0xfd, ...uleb(0x0c), ...new Array<number>(16).fill(0)],
  /** Lane `lane`'s eight bytes of the vector stored at addr: `store64Lane(lane)(addr, vector)`. */
  store64Lane: (lane: number, offset = 0) => simd(0x5b, ...memarg(3, offset), lane),
  /** A constant of two 64-bit lanes (integers, taken modulo 2⁶⁴), little-endian as wasm stores them. */
  const: (lo: bigint, hi: bigint): Code => {
    const bytes = new DataView(new ArrayBuffer(16));
    bytes.setBigUint64(0, BigInt.asUintN(64, lo), true);
    bytes.setBigUint64(8, BigInt.asUintN(64, hi), true);
    return [0xfd, ...uleb(0x0c), ...new Uint8Array(bytes.buffer)];
  },
  /** One double read into lane `lane` of a vector, the other lane kept: `load64Lane(lane)(addr, vector)`. */
  load64Lane: (lane: number, offset = 0) => simd(0x57, ...memarg(3, offset), lane),
  /** One float read and copied into all four lanes. */
  load32Splat: (addr: Code, offset = 0): Code => simd(0x09, ...memarg(2, offset))(addr),
  /** One double read into lane 0, lane 1 zero. */
  load64Zero: (addr: Code, offset = 0): Code => simd(0x5d, ...memarg(3, offset))(addr),
  and: simd(0x4e),
  /** 1 (i32) when any bit is set. */
  anyTrue: simd(0x53),
  andnot: simd(0x4f),
  or: simd(0x50),
  /** Bits of the first operand where the mask's are set, else of the second: `bitselect(a, b, mask)`. */
  bitselect: simd(0x52),
};

/** `i32x4.shuffle(lanes)(a, b)`: lanes 0–3 a's, 4–7 b's (i8x16.shuffle, four bytes a lane). */
export const i32x4Shuffle = (lanes: readonly [number, number, number, number]) => simd(0x0d, ...lanes.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]));

export const i64x2 = {
  add: simd(0xce),
  sub: simd(0xd1),
  /** Lanewise shift left by an i32 count. */
  shl: simd(0xcb),
  /** Lanewise arithmetic (signed) shift right by an i32 count. */
  shrS: simd(0xcc),
  /** 1 (i32) when every lane is nonzero. */
  allTrue: simd(0xc3),
  /** Lanewise signed `a > b`, all ones or all zeros. */
  gtS: simd(0xd9),
  extractLane: (lane: number) => simd(0x1d, lane),
};

export const i32x4 = {
  add: simd(0xae),
  /** Both lanes of an f64x2 truncated to i32 (saturating) in lanes 0 and 1; lanes 2 and 3 zero. */
  truncSatF64x2SZero: simd(0xfc),
  extractLane: (lane: number) => simd(0x1b, lane),
};

/** Four floats to a vector: IEEE single precision, lane by lane. */
export const f32x4 = {
  splat: simd(0x13),
  /** Both lanes of an f64x2 rounded to floats in lanes 0 and 1; lanes 2 and 3 zero. */
  demoteF64x2Zero: simd(0x5e),
  add: simd(0xe4),
  mul: simd(0xe6),
  /** Lanewise `a < b`, all ones or all zeros (false where either is NaN). */
  lt: simd(0x43),
  le: simd(0x45),
  /** Lanewise `b < a ? b : a`. */
  pmin: simd(0xea),
  /** Lanewise `a < b ? b : a`. */
  pmax: simd(0xeb),
};

export const f64x2 = {
  add: simd(0xf0),
  sub: simd(0xf1),
  mul: simd(0xf2),
  div: simd(0xf3),
  /** Lanewise `a < b`, all ones or all zeros (false where either is NaN). */
  lt: simd(0x49),
  gt: simd(0x4a),
  le: simd(0x4b),
  abs: simd(0xec),
  /** Lanewise `a != b`: all ones where they differ or either is NaN. */
  ne: simd(0x48),
  /** Lanewise `b < a ? b : a`, JavaScript's conditional (not IEEE minimum: no NaN or −0 rule of its own). */
  pmin: simd(0xf6),
  /** Lanewise `a < b ? b : a`. */
  pmax: simd(0xf7),
  extractLane: (lane: number) => simd(0x21, lane),
  splat: simd(0x14),
  /** The vector with lane `lane` replaced by a double. */
  replaceLane: (lane: number) => simd(0x22, lane),
};

/** `while (i < end) { body; i += step }` on an i32 local, as block/loop/br_if. */
export function forLoop(i: number, end: Code, step: number, body: Code[]): Code {
  const exitUnlessBelow = seq(i32.ltU(local.get(i), end), [0x45 /* i32.eqz */, 0x0d, 1 /* br_if to the block's end */]);
  const next = local.set(i, i32.add(local.get(i), i32.const(step)));
  return seq([0x02, 0x40 /* block, no result */, 0x03, 0x40 /* loop */], exitUnlessBelow, ...body, next, [0x0c, 0 /* br to the loop */, 0x0b, 0x0b]);
}

/** `if (cond) { body }`: no else, no result. */
export function ifThen(cond: Code, body: Code[]): Code {
  return seq(cond, [0x04, 0x40 /* if, no result */], ...body, [0x0b]);
}

/** Bytes placed in memory at `offset` when a module is instantiated (an active data segment). */
export interface Data {
  readonly offset: number;
  readonly bytes: Uint8Array;
}

export interface Func {
  readonly name: string;
  readonly params: readonly ValType[];
  /** Locals beyond the parameters, numbered after them. */
  readonly locals: readonly ValType[];
  readonly body: readonly Code[];
}

const vec = (items: readonly Code[]): number[] => seq(uleb(items.length), ...items);
const name = (s: string): number[] => vec([...s].map((c) => [c.charCodeAt(0)]));
const section = (id: number, content: Code): number[] => seq([id], uleb(content.length), content);

/**
 * A module exporting `funcs` (no results), all reading and writing memory `env.memory`,
 * which each instance finds holding `data` (tables a kernel reads).
 */
export function assemble(funcs: readonly Func[], data: readonly Data[] = []): Uint8Array {
  const types = funcs.map((f) => seq([0x60], vec(f.params.map((t) => [t])), [0]));
  const memoryImport = seq(name("env"), name("memory"), [0x02, 0x00, 1 /* min one page, no max */]);
  const bodies = funcs.map((f) => {
    const locals = vec(f.locals.map((t) => [1, t]));
    const code = seq(locals, ...f.body, [0x0b]);
    return seq(uleb(code.length), code);
  });
  return Uint8Array.from(
    seq(
      [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
      section(1, vec(types)),
      section(2, vec([memoryImport])),
      section(3, vec(funcs.map((_, k) => uleb(k)))),
      section(7, vec(funcs.map((f, k) => seq(name(f.name), [0x00], uleb(k))))),
      section(10, vec(bodies)),
      ...(data.length === 0 ? [] : [section(11, vec(data.map((d) => seq([0x00], i32.const(d.offset), [0x0b], vec(Array.from(d.bytes, (b) => [b]))))))]),
    ),
  );
}

/** Bytes in a page of wasm memory. */
export const PAGE = 65536;

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** What of the WebAssembly JS API is used here (ES2022's lib does not declare it). */
interface WasmApi {
  Memory: new (d: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
}

/**
 * Compile and instantiate `bytes` (from `assemble`) with a fresh memory of one page.
 * Synchronous: the modules are small. Throws where WebAssembly (or an instruction, such
 * as SIMD) is not supported; callers fall back to JavaScript.
 */
export function instantiate(bytes: Uint8Array): { memory: WasmMemory; exports: Record<string, unknown> } {
  return instanceOf(new (wasmApi().Module)(bytes), 1);
}

function wasmApi(): WasmApi {
  const W = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
  if (W === undefined) throw new Error("WebAssembly is not available");
  return W;
}

/** An instance of a compiled module with a memory of its own of `pages` pages. */
function instanceOf(module: object, pages: number): { memory: WasmMemory; exports: Record<string, unknown> } {
  const W = wasmApi();
  const memory = new W.Memory({ initial: pages });
  const { exports } = new W.Instance(module, { env: { memory } });
  return { memory, exports };
}

/** An instantiated kernel module and a view of its memory, made larger on demand. */
export interface Workspace {
  readonly exports: Record<string, unknown>;
  /** A view of the memory with room for `n` doubles; null beyond the workspace's limit. */
  heap(n: number): Float64Array | null;
  /**
   * A view of a new instance's memory, the workspace's from now on, with room for `n` doubles
   * (null beyond the limit): the old memory stays as it is for the views that hold it.
   */
  fresh(n: number): Float64Array | null;
}

/**
 * The module of `bytes`, instantiated on first use: null where WebAssembly (or SIMD) is
 * not available, and the callers fall back to JavaScript. Its operands may take up to
 * `maxBytes`: memory made larger stays so, and a larger operation goes to the JavaScript
 * kernel rather than pin more.
 *
 * A workspace that needs more memory is a new instance with a larger memory, never a
 * grown one: growing a memory detaches its old buffer, and the first detached buffer of
 * a process invalidates V8's ArrayBufferDetaching protector, after which every typed-array
 * access of every function checks for detachment (loops over Float64Arrays 1.3–2× slower,
 * tapes, sweeps and compiled code alike) and the hot functions compiled before are thrown
 * away. The old memory is left to the collector, which detaches nothing.
 */
export function lazyWorkspace(bytes: () => Uint8Array, maxBytes: number): () => Workspace | null {
  let made: Workspace | null | undefined;
  return () => {
    if (made !== undefined) return made;
    try {
      const module = new (wasmApi().Module)(bytes());
      let current = instanceOf(module, 1);
      let view = new Float64Array(current.memory.buffer);
      const renew = (pages: number): Float64Array => {
        current = instanceOf(module, pages);
        view = new Float64Array(current.memory.buffer);
        return view;
      };
      made = {
        get exports() {
          return current.exports;
        },
        heap: (n: number): Float64Array | null => {
          const need = n * 8;
          if (need > maxBytes) return null;
          // at least twice the pages, so that a run of growing operands makes few instances
          if (need > view.byteLength) renew(Math.min(Math.max(Math.ceil(need / PAGE), 2 * (view.byteLength / PAGE)), Math.ceil(maxBytes / PAGE)));
          return view;
        },
        fresh: (n: number): Float64Array | null => (n * 8 > maxBytes ? null : renew(Math.max(Math.ceil((n * 8) / PAGE), 1))),
      };
    } catch {
      made = null;
    }
    return made;
  };
}
