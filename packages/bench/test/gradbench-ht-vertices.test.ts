/**
 * GradBench ht's skinning of only the vertices the residuals read (usedVertices) against
 * the skinning of every vertex of the model: the same residuals and the same Jacobian,
 * bit for bit, on inputs whose points read few of the model's vertices.
 */
import { describe, expect, it } from "vitest";
import {
  htJacobian, htObjective, htObjectiveTraced, prepareHt, prepareHtJacobian, prepareHtObjective, usedVertices,
} from "../src/gradbench/modules/ht.js";
import { InputError } from "../src/gradbench/json.js";
import { htInput } from "../src/gradbench/inputs.js";
import { firstDifference } from "./helpers/bits.js";

it("usedVertices: the vertices read, ascending, and each one's position among them", () => {
  const { used, at } = usedVertices([Int32Array.of(5, 2, 5), Int32Array.of(7, 2)], 9);
  expect([...used]).toEqual([2, 5, 7]);
  expect([...at]).toEqual([-1, -1, 0, -1, -1, 1, -1, 2, -1]);
});

describe("ht: the vertices read = every vertex, bit for bit", () => {
  for (const [k, [complicated, mirrored]] of [[false, false], [true, false], [false, true], [true, true]].entries()) {
    it(`${complicated ? "complicated" : "simple"}${mirrored ? ", mirrored" : ""}: objective and Jacobian`, () => {
      // 7 points on a model of 60 vertices: at most 21 vertices read
      const json = htInput(7, 60, complicated, 211 + k, mirrored);
      const all = prepareHt(json, { allVertices: true });
      const some = prepareHt(json);
      expect(all.weightedPositions.shape[1]).toBe(60);
      expect(some.weightedPositions.shape[1]).toBeLessThanOrEqual(21);
      expect(firstDifference(htObjectiveTraced(some), htObjectiveTraced(all))).toBe(-1);
      expect(firstDifference(htObjective(prepareHtObjective(json)), htObjectiveTraced(all))).toBe(-1);
      const J = htJacobian(prepareHtJacobian(json)).data as Float64Array;
      const JAll = htJacobian(prepareHtJacobian(json, { allVertices: true })).data as Float64Array;
      expect(firstDifference(J, JAll)).toBe(-1);
    });
  }

  it("a correspondence or a triangle's vertex out of range is an InputError", () => {
    const simple = htInput(4, 10, false, 3);
    simple.data.correspondences[2] = 10;
    expect(() => prepareHt(simple)).toThrow(InputError);
    const complicated = htInput(4, 10, true, 3);
    complicated.data.model.triangles[complicated.data.correspondences[1]][2] = -1;
    expect(() => prepareHt(complicated)).toThrow(/triangles\[correspondences\]\[2\]\[1\] is -1/);
    complicated.data.correspondences[0] = complicated.data.model.triangles.length;
    expect(() => prepareHt(complicated)).toThrow(/correspondences\[0\]/);
  });
});
