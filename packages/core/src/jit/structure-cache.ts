/**
 * @file A bounded cache of what was made for a structure (a term's, a tape's), found by a
 * key with a hash: a term traced again by a later call (an uncached grad or vmap traces f
 * anew every time) finds what was made for an earlier one of the same structure. A few keys
 * may share a hash, so each hash holds a list. Bounded: when full everything is dropped (a
 * program that makes ever new structures makes their code again rather than keeping it all),
 * as jit/javascript.ts codeCache does for source strings.
 */

/** A structure's key: `hash` narrows the search, the cache's `same` decides. */
export interface Keyed {
  readonly hash: number;
}

/** Entries kept by their key's structure. */
export interface StructureCache<K extends Keyed, E extends { readonly key: K }> {
  /** The entry whose key has the structure of `key`, if kept. */
  find(key: K): E | undefined;
  /** Keeps `entry` (dropping every entry first when `limit` are kept) and returns it. */
  add(entry: E): E;
}

/** A cache that compares keys by `same`, keeping at most `limit` entries. */
export function structureCache<K extends Keyed, E extends { readonly key: K }>(same: (p: K, q: K) => boolean, limit = 256): StructureCache<K, E> {
  const byHash = new Map<number, E[]>();
  let count = 0;
  return {
    find: (key) => byHash.get(key.hash)?.find((e) => same(e.key, key)),
    add: (entry) => {
      if (count >= limit) {
        byHash.clear();
        count = 0;
      }
      count++;
      const list = byHash.get(entry.key.hash);
      if (list === undefined) byHash.set(entry.key.hash, [entry]);
      else list.push(entry);
      return entry;
    },
  };
}

/** FNV-1a over `words`, then over `text`'s characters: a key's hash. */
export function hashWords(words: Int32Array, text = ""): number {
  let hash = 0x811c9dc5;
  for (let w = 0; w < words.length; w++) hash = Math.imul(hash ^ words[w], 0x01000193);
  for (let c = 0; c < text.length; c++) hash = Math.imul(hash ^ text.charCodeAt(c), 0x01000193);
  return hash;
}
