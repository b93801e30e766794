/**
 * @file The last module of @wengert/ops: the end of its code in a bundle (extent.ts).
 */
import { opsExtent } from "./extent.js";

opsExtent.end = () => new Error().stack ?? "";
