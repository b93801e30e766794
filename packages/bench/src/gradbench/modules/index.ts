/**
 * @file The eval modules wengert-gradbench knows, by GradBench module name.
 *
 * A `define` of a name not in this table answers `success: false`.
 */
import type { EvalModule } from "../module.js";
import { det } from "./det.js";
import { hello } from "./hello.js";
import { kmeans } from "./kmeans.js";
import { llsq } from "./llsq.js";
import { lse } from "./lse.js";
import { ode } from "./ode.js";
// ---- the other six evals (gmm, ba, ht, lstm, particle, saddle): their imports here ----
import { ba } from "./ba.js";
import { gmm } from "./gmm.js";
import { ht } from "./ht.js";
import { lstm } from "./lstm.js";
import { particle } from "./particle.js";
import { saddle } from "./saddle.js";
// ---- end of the other six's imports ----

export const modules: Readonly<Record<string, EvalModule>> = {
  hello,
  lse,
  llsq,
  det,
  ode,
  kmeans,
  // ---- the other six evals (gmm, ba, ht, lstm, particle, saddle): one line each here ----
  gmm,
  ba,
  ht,
  lstm,
  particle,
  saddle,
  // ---- end of the other six ----
};
