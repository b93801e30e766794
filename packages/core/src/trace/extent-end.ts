/**
 * @file The last module of @wengert/core: the end of its code in a bundle (extent.ts).
 */
import { coreExtent } from "./extent.js";

coreExtent.end = () => new Error().stack ?? "";
