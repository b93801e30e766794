/** @file The standard workloads of `pnpm bench`, at the sizes of packages/bench/WORKLOADS.md. */
import type { Workload } from "../types.js";
import { w1, w1Tensors } from "./w1-rosenbrock.js";
import { w2 } from "./w2-mlp.js";
import { w3 } from "./w3-control.js";
import { w4 } from "./w4-hvp.js";
import { w5 } from "./w5-chain.js";
import { w6 } from "./w6-ode.js";
import { w4Hessian } from "./w4-hessian.js";
import { w7 } from "./w7-per-example.js";

export const workloads = (): Workload[] => [
  w1(1000), w1Tensors(1000), w1(10000), w1Tensors(10000), w2(), w3(1000),
  w4(1000), w4Hessian(100), w4Hessian(100, "into"), w4Hessian(100, "lanes"), w4Hessian(100, "rows"),
  w5(100000), w5(200000), w6(), w7(),
];

export { w1, w1Tensors, w2, w3, w4, w4Hessian, w5, w6, w7 };
