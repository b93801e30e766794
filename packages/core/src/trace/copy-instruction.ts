/**
 * @file One instruction of a tape copied into another, its arguments renamed: how a body's
 * term is rebuilt (literals put in, free variables made inputs) and a scan written out.
 */
import { WengertError } from "../errors.js";
import { CONST, FREE, INPUT, IS_TENSOR_OP } from "./opcodes.js";
import type { Tape } from "./tape.js";
import { ownedCopy } from "./host-tensor.js";

/** Copy instruction i of `from` into `to`, its arguments through `map`; returns its variable there. */
export function copyInstruction(from: Tape, i: number, to: Tape, map: Int32Array): number {
  const code = from.op[i];
  if (code === CONST) return from.x[i] === 0 ? to.constant(from.val[i]) : to.tensorConstant(ownedCopy({ dims: from.dims(i), data: from.buf(i) }));
  if (code === INPUT) return from.x[i] === 0 ? to.input(from.a[i], from.val[i]) : to.tensorInput(from.a[i], { dims: from.dims(i), data: from.buf(i) });
  if (code === FREE) throw new WengertError("internal: a free variable left in a closed term");
  if (from.x[i] === 0) return to.append(code, map[from.a[i]], map[from.b[i]]);
  const args = from.args(i).map((v) => map[v]);
  if (IS_TENSOR_OP[code]) return to.appendOp(code, args, from.params(i), from.dims(i));
  return to.applyElementwise(code, args[0], args[1] ?? 0, from.dims(i));
}
