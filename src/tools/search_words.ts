/**
 * What `search_device` returns, and a search by words shaped as its result:
 * kept apart from the tool (no schema library), so the command line's
 * cached search answers with the same object without loading the tools.
 *
 * @module
 */
import type { IndexedDevice } from "../index/device_index.ts";
import type { FamilyHint } from "../index/families.ts";
import type { RankedDevice, RankedPage } from "../index/query.ts";

/** What every page has: the count, where it starts, where the next one does. */
export interface Page {
  total: number;
  offset: number;
  next_offset?: number;
  /** When nothing matched: the nearest device families, when the backend has an index. */
  nearest_families?: FamilyHint[];
}

/** A device of a pattern search, with the readback that confirms a write to it. */
export interface PatternDevice extends IndexedDevice {
  readback?: string;
}

/** What `search_device` returns, by how the text was read (`mode`). */
export type SearchDeviceResult =
  | Page & { mode: "pattern"; note?: string; devices: PatternDevice[] }
  | Page & { mode: "regex"; devices: IndexedDevice[] }
  | Page & InformalExtras & { mode: "informal"; devices: RankedDevice[] };

/** What a search by words says beside its devices. */
interface InformalExtras {
  /** The question's terms as understood. */
  understood: string[];
  /** What is wanted of the devices: "setpoint", "readback", "adjustable". */
  intents?: string[];
  /** Which of the devices found were taken: "second", "last 3". */
  selection?: string;
  /** Everyday words no device is described by, set aside. */
  ignored?: string[];
  /** When nothing matched: the terms nothing satisfies together with the rest. */
  unmatched?: string[];
  /** When nothing matched: the devices nearest to the question, not an answer to it. */
  suggestions?: RankedDevice[];
  note?: string;
}

/** A page of a search by words as the tool returns it. */
export function informalResult(
  page: RankedPage,
): Extract<SearchDeviceResult, { mode: "informal" }> {
  const next = page.offset + page.devices.length;
  return {
    mode: "informal",
    understood: page.terms,
    ...(page.intents.length ? { intents: page.intents } : {}),
    ...(page.selection ? { selection: page.selection } : {}),
    ...(page.ignored.length ? { ignored: page.ignored } : {}),
    total: page.total,
    offset: page.offset,
    ...(page.note ? { note: page.note } : {}),
    devices: page.devices,
    ...(next < page.total ? { next_offset: next } : {}),
    ...(page.total === 0 && page.unmatched.length ? { unmatched: page.unmatched } : {}),
    ...(page.suggestions.length ? { suggestions: page.suggestions } : {}),
  };
}
