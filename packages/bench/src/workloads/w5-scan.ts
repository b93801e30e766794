/**
 * @file W5's chain as a scan: y_{i+1} = 0.9 y_i + 0.1 sin y_i traced once and applied N
 * times; its gradient's tape holds one instruction for the loop (docs/scan.md).
 */
import { add, grad, mul, scan, sin, type Scalar } from "@wengert/core";

export const chainScan =
  (N: number) =>
  (x: Scalar): Scalar =>
    scan((y: Scalar): [Scalar] => [add(mul(0.9, y), mul(0.1, sin(y)))], x, N)[0];

export const chainScanDerivative = (x: number, N: number): number => grad(chainScan(N), x) as number;
