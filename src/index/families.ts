/**
 * Device families (names with their numbers replaced by `*`), to suggest the
 * nearest ones when a search finds nothing.
 *
 * @module
 */
import type { DeviceIndex } from "./device_index.ts";
import { rankedSearch } from "./query.ts";

/** A family of devices as a pattern that finds all of them. */
export interface FamilyHint {
  pattern: string;
  devices: number;
  example: string;
}

const families = new WeakMap<DeviceIndex, Map<string, { count: number; example: string }>>();

/** The family pattern of a name: every run of digits becomes `*`. */
export function familyOf(name: string): string {
  return name.replace(/[0-9]+/g, "*");
}

function familyTable(index: DeviceIndex): Map<string, { count: number; example: string }> {
  let t = families.get(index);
  if (t !== undefined) return t;
  t = new Map();
  for (const name of index.data.names) {
    const f = familyOf(name);
    const e = t.get(f);
    if (e) e.count++;
    else t.set(f, { count: 1, example: name });
  }
  families.set(index, t);
  return t;
}

/**
 * Up to `max` families nearest to what was asked: those of the best informal
 * matches of its words (with wider typo tolerance), else the largest ones.
 */
export function nearestFamilies(index: DeviceIndex, text: string, max = 5): FamilyHint[] {
  const table = familyTable(index);
  const wordsOnly = text.replace(/[^A-Za-z0-9]+/g, " ").trim();
  const out: FamilyHint[] = [];
  const seen = new Set<string>();
  if (wordsOnly) {
    const ranked = rankedSearch(index, wordsOnly, { limit: 500, lenient: true });
    // Nothing satisfies every word: the near misses say where to look.
    for (const d of ranked.total ? ranked.devices : ranked.suggestions) {
      const f = familyOf(d.name);
      if (seen.has(f)) continue;
      seen.add(f);
      const e = table.get(f);
      out.push({ pattern: f, devices: e?.count ?? 1, example: e?.example ?? d.name });
      if (out.length === max) return out;
    }
  }
  if (out.length) return out;
  return [...table].sort((a, b) => b[1].count - a[1].count).slice(0, max).map(([pattern, e]) => ({
    pattern,
    devices: e.count,
    example: e.example,
  }));
}
