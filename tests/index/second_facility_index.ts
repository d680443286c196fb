/**
 * The second facility's index as a real EPICS installation would build it:
 * its channels read from the fake ChannelFinder page by page through the
 * adapter's own source (`~search_after`), then indexed.
 *
 * @module
 */
import { buildIndex, type DeviceIndex } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { ChannelFinderSource } from "../../src/adapters/epics/index_source.ts";
import { serveSecondFacility } from "../support/facility/second_facility.ts";

/** Builds the index of the second facility over loopback HTTP. */
export async function secondFacilityIndex(): Promise<DeviceIndex> {
  await using cf = serveSecondFacility();
  const source = new ChannelFinderSource({
    label: "ChannelFinder",
    base: `${cf.origin}/ChannelFinder/resources`,
    timeoutMs: 30_000,
    maxBytes: 64 << 20,
    maxBytesKey: "[epics] channelfinder_max_bytes",
  }, { maxChannels: 1_000_000, refreshMs: 0, pageSize: 1000 });
  return await buildIndex(source, await loadSynonyms());
}
