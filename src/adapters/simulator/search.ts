/**
 * Name look-ups over the simulated namespace: wildcard search with paging
 * (answered by the device index), and "did you mean" suggestions for names
 * that do not exist.
 *
 * @module
 */

import type { DeviceInfo, DevicePage, DeviceQuery } from "../adapter.ts";
import type { Facility } from "../../facility/facility.ts";
import { nearbyDevices } from "../../facility/scale.ts";
import type { DeviceIndex } from "../../index/device_index.ts";

/** Devices per page when the query gives no `limit`. */
export const DEFAULT_PAGE_SIZE = 50;

/**
 * Matches a query against the whole namespace (sorted by name), through a
 * device index of the facility (`index`, else the facility's own): the same
 * wildcard semantics as a scan, without one.
 */
export async function searchDevices(
  facility: Facility,
  q: DeviceQuery,
  index?: DeviceIndex,
): Promise<DevicePage> {
  const page = (index ?? await facilityIndex(facility)).match({
    pattern: q.pattern,
    subsystem: q.subsystem,
    writable: q.writable,
    properties: q.properties,
    tags: q.tags,
    offset: q.offset,
    limit: q.limit ?? DEFAULT_PAGE_SIZE,
  });
  const devices = page.devices.map((d) => {
    const def = facility.byName.get(d.name);
    if (def === undefined) throw new Error(`device index: ${d.name} is not in the facility`);
    return copyInfo(def.info);
  });
  return { total: page.total, offset: page.offset, devices };
}

const indexes = new WeakMap<Facility, Promise<DeviceIndex>>();

/**
 * The facility's device index with the built-in synonyms, built on first use
 * (its modules too, so start-up does not load them).
 */
export function facilityIndex(facility: Facility): Promise<DeviceIndex> {
  let index = indexes.get(facility);
  if (index === undefined) indexes.set(facility, index = buildFacilityIndex(facility));
  return index;
}

async function buildFacilityIndex(facility: Facility): Promise<DeviceIndex> {
  const [{ channelRecord }, { IndexBuilder }, { DeviceIndex, Lexicon, lexiconDigest }, syn] =
    await Promise.all([
      import("./index_source.ts"),
      import("../../index/builder.ts"),
      import("../../index/mod.ts"),
      import("../../index/synonyms.ts"),
    ]);
  const synonyms = await syn.loadSynonyms();
  const lexicon = new Lexicon(synonyms);
  const builder = new IndexBuilder(
    lexicon,
    `simulator:${facility.spec.name}`,
    lexiconDigest(synonyms),
  );
  for (const d of facility.devices) {
    builder.add(channelRecord(d.name, d.info.description, d.info.units, d.info.writable));
  }
  return new DeviceIndex(builder.finish(), lexicon);
}

/**
 * Up to `max` existing names close to `name`: a case-insensitive match first,
 * then the nearest by edit distance among names of similar length.
 */
export function suggest(facility: Facility, name: string, max = 3): string[] {
  const upper = name.trim().toUpperCase();
  if (facility.byName.has(upper)) return [upper];
  const budget = Math.max(2, Math.floor(upper.length / 6));
  const scored: { name: string; d: number }[] = [];
  for (const def of nearbyDevices(facility, upper)) {
    if (Math.abs(def.name.length - upper.length) > budget) continue;
    const d = boundedDistance(upper, def.name, budget);
    if (d <= budget) scored.push({ name: def.name, d });
  }
  scored.sort((a, b) => a.d - b.d || (a.name < b.name ? -1 : 1));
  return scored.slice(0, max).map((s) => s.name);
}

/** The longest leading run of `:`-segments that some device shares, as a search pattern. */
export function familyHint(facility: Facility, name: string): string | undefined {
  const segments = name.trim().toUpperCase().split(":");
  for (let n = segments.length - 1; n >= 1; n--) {
    const prefix = segments.slice(0, n).join(":") + ":";
    if (nearbyDevices(facility, name).some((d) => d.name.startsWith(prefix))) return `${prefix}*`;
  }
  return undefined;
}

/** Levenshtein distance, giving up (returning budget + 1) once it must exceed `budget`. */
function boundedDistance(a: string, b: string, budget: number): number {
  let prev = new Array<number>(b.length + 1);
  let curr = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    curr[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min((prev[j] ?? 0) + 1, (curr[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      curr[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > budget) return budget + 1;
    [prev, curr] = [curr, prev];
  }
  return prev[b.length] ?? budget + 1;
}

/** A copy of shared, precomputed device facts, safe to hand to callers who may edit it. */
export function copyInfo(info: DeviceInfo): DeviceInfo {
  const copy: DeviceInfo = { ...info };
  if (info.limits) copy.limits = { ...info.limits };
  if (info.alarm) copy.alarm = { ...info.alarm };
  if (info.labels) copy.labels = [...info.labels];
  return copy;
}
