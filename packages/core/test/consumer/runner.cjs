/**
 * @file The consumer's program through require (consumer.test.ts): Node ≥ 20.19 loads an
 * ES module with require() when nothing in it awaits at top level, so CommonJS code uses
 * @wengert/core as it is. Run from the consumer project, beside out/program.js.
 */
const { grad, mul, sin } = require("@wengert/core");

const d = grad((x) => mul(x, sin(x)), 2);
if (Math.abs(d - (Math.sin(2) + 2 * Math.cos(2))) > 1e-12) throw new Error(`require: grad gave ${d}`);
require("./out/program.js");
