/**
 * Where an index's columns are: in memory (just built), or in its cache file,
 * read a piece at a time (`cache.ts`): a search from the command line reads
 * the header, the term list, the postings of its own terms and the names of
 * the devices it shows — a few hundred kilobytes of a file of hundreds of
 * megabytes — instead of loading the whole index before the query runs.
 *
 * @module
 */
import { FIELD_BITS, type IndexData } from "./data.ts";

/** What the index reads of its columns. */
export interface IndexStore {
  readonly sourceId: string;
  readonly lexiconDigest: string;
  readonly builtAt: number;
  /** Number of devices. */
  readonly size: number;
  readonly learned: Record<string, string[]>;
  readonly learnedPlaces: Record<string, string>;
  /** Every term, sorted. */
  terms(): string[];
  /** Where each term's postings start (one more than there are terms). */
  starts(): Uint32Array;
  /** The postings of term `id`. */
  postings(id: number): Uint32Array;
  /**
   * The postings of term `id` for devices `from`..`to` (inclusive): a long
   * list is read only where those devices are.
   */
  postingsRange(id: number, from: number, to: number): Uint32Array;
  /** The fields in which device `doc` holds term `id` (0 when it does not). */
  fields(id: number, doc: number): number;
  name(doc: number): string;
  description(doc: number): string;
  units(doc: number): string;
  writable(doc: number): boolean;
  /** The signal's {@link Kind}. */
  kind(doc: number): number;
  /** Everything in memory (patterns, benchmarks). */
  full(): IndexData;
  /** Reads ahead what a page of these devices shows (a cache file; nothing in memory). */
  prefetch?(docs: readonly number[]): void;
  /**
   * The device names in name order, a slice at a time, read without holding
   * the event loop for long (a prompt waiting for keys stays responsive).
   */
  nameChunks(): AsyncIterable<string[]>;
}

/** Names handed over per slice. */
const NAME_SLICE = 20_000;

/** An index built in this process, or loaded whole. */
export class MemoryStore implements IndexStore {
  constructor(readonly data: IndexData) {}
  get sourceId(): string {
    return this.data.sourceId;
  }
  get lexiconDigest(): string {
    return this.data.lexiconDigest;
  }
  get builtAt(): number {
    return this.data.builtAt;
  }
  get size(): number {
    return this.data.names.length;
  }
  get learned(): Record<string, string[]> {
    return this.data.learned ?? {};
  }
  get learnedPlaces(): Record<string, string> {
    return this.data.learnedPlaces ?? {};
  }
  terms(): string[] {
    return this.data.terms;
  }
  starts(): Uint32Array {
    return this.data.starts;
  }
  postings(id: number): Uint32Array {
    const s = this.data.starts;
    return this.data.postings.subarray(s[id] ?? 0, s[id + 1] ?? 0);
  }
  postingsRange(id: number, from: number, to: number): Uint32Array {
    const p = this.postings(id);
    return p.subarray(
      lowerBound((i) => p[i] ?? 0, p.length, from),
      lowerBound((i) => p[i] ?? 0, p.length, to + 1),
    );
  }
  fields(id: number, doc: number): number {
    return fieldsIn(this.postings(id), doc);
  }
  name(doc: number): string {
    return this.data.names.at(doc);
  }
  description(doc: number): string {
    return this.data.descriptions.at(doc);
  }
  units(doc: number): string {
    return this.data.unitsTable[this.data.unitsOf[doc] ?? 0] ?? "";
  }
  writable(doc: number): boolean {
    return ((this.data.writable[doc] ?? 0) & 1) === 1;
  }
  kind(doc: number): number {
    return ((this.data.writable[doc] ?? 0) >> 1) & 3;
  }
  full(): IndexData {
    return this.data;
  }
  async *nameChunks(): AsyncIterable<string[]> {
    const names = this.data.names;
    for (let i = 0; i < names.length; i += NAME_SLICE) {
      const slice: string[] = [];
      for (let j = i; j < Math.min(names.length, i + NAME_SLICE); j++) slice.push(names.at(j));
      yield slice;
      await new Promise((r) => setTimeout(r, 0));
    }
  }
}

/** The first position in `[0, n)` whose device is at least `doc` (postings hold `doc << 4`). */
export function lowerBound(at: (i: number) => number, n: number, doc: number): number {
  let lo = 0, hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at(mid) >>> FIELD_BITS < doc) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The field bits of `doc` in a sorted postings list (0 when it is not there). */
export function fieldsIn(p: Uint32Array, doc: number): number {
  const i = lowerBound((j) => p[j] ?? 0, p.length, doc);
  const v = p[i];
  return v !== undefined && v >>> FIELD_BITS === doc ? v & ((1 << FIELD_BITS) - 1) : 0;
}
