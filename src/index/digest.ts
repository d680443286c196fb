/**
 * The digest that keys a cached index to the synonym table it was made with.
 *
 * @module
 */
import type { SynonymData } from "./lexicon.ts";

/** A digest of a synonym table, so an index made with other synonyms is not reused. */
export function lexiconDigest(data: SynonymData): string {
  const text = JSON.stringify(data);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
