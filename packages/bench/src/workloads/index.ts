/** @file The standard workloads of `pnpm bench`, at the sizes of packages/bench/WORKLOADS.md. */
import type { Workload } from "../types.js";
import { w1 } from "./w1-rosenbrock.js";
import { w2 } from "./w2-mlp.js";
import { w3 } from "./w3-control.js";
import { w4 } from "./w4-hvp.js";
import { w5 } from "./w5-chain.js";
import { w6 } from "./w6-ode.js";

export const workloads = (): Workload[] => [w1(1000), w1(10000), w2(), w3(1000), w4(1000), w5(100000), w5(200000), w6()];

export { w1, w2, w3, w4, w5, w6 };
