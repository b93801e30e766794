import { describe, expect, it } from "vitest";
import { hashWords, structureCache } from "../../src/jit/structure-cache.js";

interface Key {
  readonly hash: number;
  readonly name: string;
}
const same = (p: Key, q: Key): boolean => p.name === q.name;

describe("structureCache", () => {
  it("tells apart keys that share a hash, by `same`", () => {
    const cache = structureCache<Key, { key: Key; value: number }>(same);
    cache.add({ key: { hash: 7, name: "a" }, value: 1 });
    cache.add({ key: { hash: 7, name: "b" }, value: 2 });
    expect(cache.find({ hash: 7, name: "a" })?.value).toBe(1);
    expect(cache.find({ hash: 7, name: "b" })?.value).toBe(2);
    expect(cache.find({ hash: 7, name: "c" })).toBeUndefined();
    expect(cache.find({ hash: 8, name: "a" })).toBeUndefined();
  });

  it("drops every entry when it holds `limit` and another is added", () => {
    const cache = structureCache<Key, { key: Key; value: number }>(same, 2);
    cache.add({ key: { hash: 1, name: "a" }, value: 1 });
    cache.add({ key: { hash: 2, name: "b" }, value: 2 });
    expect(cache.find({ hash: 1, name: "a" })?.value).toBe(1);
    cache.add({ key: { hash: 3, name: "c" }, value: 3 });
    expect(cache.find({ hash: 1, name: "a" })).toBeUndefined();
    expect(cache.find({ hash: 2, name: "b" })).toBeUndefined();
    expect(cache.find({ hash: 3, name: "c" })?.value).toBe(3);
  });

  it("hashes words and text: FNV-1a, different for a changed word or character", () => {
    const w = Int32Array.from([1, 2, 3]);
    expect(hashWords(w)).toBe(hashWords(Int32Array.from([1, 2, 3])));
    expect(hashWords(w)).not.toBe(hashWords(Int32Array.from([1, 2, 4])));
    expect(hashWords(w, "x")).not.toBe(hashWords(w, "y"));
    expect(hashWords(new Int32Array(0))).toBe(0x811c9dc5);
  });
});
