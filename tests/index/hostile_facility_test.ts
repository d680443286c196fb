/**
 * The device index against a facility service that says what it likes: the
 * second facility served by the fake ChannelFinder with channels whose
 * properties, tags and descriptions are written to break the index or to
 * poison what it learns, read through the adapter's own source as a real
 * installation reads them.
 */
import assert from "node:assert/strict";
import {
  buildIndex,
  DeviceIndex,
  Lexicon,
  lexiconDigest,
  rankedSearch,
} from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { openIndex, saveIndex } from "../../src/index/cache.ts";
import { ChannelFinderSource } from "../../src/adapters/epics/index_source.ts";
import { type CfChannel } from "../support/facility/fake_epics.ts";
import {
  secondFacilityChannels,
  serveSecondFacility,
} from "../support/facility/second_facility.ts";
import { tempDir } from "../support/temp.ts";

const synonyms = await loadSynonyms();

/** The index of `channels` as the adapter builds it from a ChannelFinder serving them. */
async function indexOf(channels: CfChannel[]): Promise<DeviceIndex> {
  await using cf = serveSecondFacility({}, channels);
  const source = new ChannelFinderSource({
    label: "ChannelFinder",
    base: `${cf.origin}/ChannelFinder/resources`,
    timeoutMs: 30_000,
    maxBytes: 64 << 20,
    maxBytesKey: "[epics] channelfinder_max_bytes",
  }, { maxChannels: 1_000_000, refreshMs: 0, pageSize: 1000 });
  return await buildIndex(source, synonyms);
}

/** The same index written to its cache file and opened as a cached search opens it. */
async function cachedOf(index: DeviceIndex, dir: string): Promise<DeviceIndex> {
  const file = `${dir}/i.idx`;
  await saveIndex(file, index.data);
  const store = await openIndex(file, index.store.sourceId, lexiconDigest(synonyms));
  assert.ok(store, "the cache it wrote opens");
  return new DeviceIndex(store, new Lexicon(synonyms));
}

const prop = (name: string, value: string) => ({
  name,
  value,
  owner: "x",
  channels: [] as never[],
});
const tag = (name: string) => ({ name, owner: "x", channels: [] as never[] });

const QUESTIONS = [
  "horizontal corrector 3 setpoint",
  "RF phase",
  "QH1 setpoints in cell 3",
  "BTS focusing quads",
  "storage ring quad current setpoints",
];

Deno.test("a property value, key or tag holding a line break is cached as it was built: the cached search answers as the built one", async () => {
  await using dir = await tempDir();
  const channels = secondFacilityChannels().map((c, i) =>
    i % 7 === 0
      ? {
        ...c,
        properties: [...c.properties, prop("note", "spare\nsee log"), prop("a\nb", "x")],
        tags: [...c.tags, tag("line\nbreak")],
      }
      : c
  );
  const built = await indexOf(channels);
  const cached = await cachedOf(built, dir.path);
  assert.equal(cached.termCount, built.termCount);
  for (const q of QUESTIONS) {
    assert.deepEqual(rankedSearch(cached, q), rankedSearch(built, q), q);
  }
  // The filter on such a value still finds the channels that carry it.
  const withNote = rankedSearch(cached, "quad", { properties: { note: "spare*" }, limit: 200 });
  assert.ok(withNote.total > 0);
  assert.deepEqual(
    withNote,
    rankedSearch(built, "quad", { properties: { note: "spare*" }, limit: 200 }),
  );
});
