/**
 * The device index: one module every adapter uses to answer patterns and
 * informal queries over its namespace.
 *
 * @example
 * ```ts
 * const lexicon = new Lexicon(await loadSynonyms());
 * const index = await buildIndex(source, lexicon);
 * rankedSearch(index, "horizontal steerers in the linac", { limit: 5 });
 * ```
 *
 * @module
 */
import { IndexBuilder } from "./builder.ts";
import { DeviceIndex } from "./device_index.ts";
import { Lexicon, type SynonymData } from "./lexicon.ts";
import { lexiconDigest } from "./digest.ts";
import type { IndexSource } from "./record.ts";

export { DeviceIndex, firstSegment } from "./device_index.ts";
export type { IndexedDevice, MatchPage, PatternQuery } from "./device_index.ts";
export { Lexicon } from "./lexicon.ts";
export type { SynonymData } from "./lexicon.ts";
export { rankedSearch } from "./query.ts";
export type { InformalOptions, RankedDevice, RankedPage } from "./query.ts";
export type { IndexRecord, IndexSource } from "./record.ts";
export { lexiconDigest } from "./digest.ts";

/** Builds the index of a whole source. */
export async function buildIndex(
  source: IndexSource,
  synonyms: SynonymData,
  signal?: AbortSignal,
): Promise<DeviceIndex> {
  const lexicon = new Lexicon(synonyms);
  const builder = new IndexBuilder(lexicon, source.id, lexiconDigest(synonyms));
  await builder.addSource(source, signal);
  return new DeviceIndex(builder.finish(), lexicon);
}
