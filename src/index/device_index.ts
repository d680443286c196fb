/**
 * The device index every adapter uses: wildcard and regular-expression
 * patterns with property, tag and writability filters and stable paging,
 * answered from name-segment postings instead of a scan; and (through
 * `query.ts`) informal, ranked queries.
 *
 * @example
 * ```ts
 * const index = await buildIndex(source, lexicon);
 * index.match({ pattern: "RING:BPM:*:X", limit: 10 }); // { total: 60, offset: 0, hits: [...] }
 * ```
 *
 * @module
 */
import { FIELD_BITS, type IndexData, PROPERTY, rawText, SEGMENT, SEPARATORS, TAG } from "./data.ts";
import { type IndexStore, MemoryStore } from "./store.ts";
import type { Lexicon } from "./lexicon.ts";
import { satisfies, type SegmentConstraint, segmentConstraints } from "./pattern.ts";
import { wildcard } from "../util/glob.ts";

/** One device as a search result shows it. */
export interface IndexedDevice {
  name: string;
  description: string;
  units: string;
  writable: boolean;
}

/** A pattern search over the index. */
export interface PatternQuery {
  /** `*` and `?` wildcards over the whole name, case-insensitive (default `*`). */
  pattern?: string;
  /** A regular expression tested against the whole name instead of `pattern`. */
  regex?: { test(name: string): boolean };
  /** First name segment, case-insensitive. */
  subsystem?: string;
  writable?: boolean;
  /** Property → glob its value must match. */
  properties?: Record<string, string>;
  /** Globs of tags a device must carry (all of them). */
  tags?: string[];
  offset?: number;
  limit?: number;
}

/** One page of pattern matches, in name order. */
export interface MatchPage {
  total: number;
  offset: number;
  devices: IndexedDevice[];
}

/** Devices per page when a query gives no limit. */
export const DEFAULT_LIMIT = 50;

/** The built index, ready to answer. */
export class DeviceIndex {
  /** Segment terms of recent non-exact constraints ("contains BPM" → ids). */
  readonly #segmentCache = new Map<string, number[]>();
  /** Where the columns are: in memory, or in the cache file, read a piece at a time. */
  readonly store: IndexStore;

  constructor(data: IndexData | IndexStore, readonly lexicon: Lexicon) {
    this.store = "full" in data ? data : new MemoryStore(data);
  }

  /** Everything in memory (a cache file is read whole on first use). */
  get data(): IndexData {
    return this.store.full();
  }

  /** Number of devices. */
  get size(): number {
    return this.store.size;
  }

  /** Number of distinct terms. */
  get termCount(): number {
    return this.store.terms().length;
  }

  /** Id of a term, if any device holds it (the terms are sorted: a binary search). */
  termId(term: string): number | undefined {
    const terms = this.store.terms();
    let lo = 0, hi = terms.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((terms[mid] as string) < term) lo = mid + 1;
      else hi = mid;
    }
    return terms[lo] === term ? lo : undefined;
  }

  /** The term of a term id. */
  term(id: number): string | undefined {
    return this.store.terms()[id];
  }

  /** Terms that are plain words (for typo correction): letters only, three or more. */
  wordTerms(): string[] {
    return this.store.terms().filter((t) => /^[a-z]{3,}$/.test(t));
  }

  /** Name of device `doc`. */
  nameOf(doc: number): string {
    return this.store.name(doc);
  }

  /** The device names in name order, a slice at a time, without holding the event loop. */
  nameChunks(): AsyncIterable<string[]> {
    return this.store.nameChunks();
  }

  /** Reads ahead what a page of these devices shows, where the columns are on disk. */
  prefetch(docs: readonly number[]): void {
    this.store.prefetch?.(docs);
  }

  /** The {@link Kind} of device `doc`'s signal. */
  kindOf(doc: number): number {
    return this.store.kind(doc);
  }

  /** Whether device `doc` can be set. */
  isWritable(doc: number): boolean {
    return this.store.writable(doc);
  }

  /** What the facility's own texts taught the index about the words of its names. */
  get learned(): Record<string, string[]> {
    return this.store.learned;
  }

  /**
   * One mark per device for each property glob and tag glob: 1 where the
   * device's value (or one of its tags) matches.
   */
  filterMasks(properties?: Record<string, string>, tags?: string[]): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const [key, glob] of Object.entries(properties ?? {})) {
      out.push(
        this.#valueDocs(`${PROPERTY}${rawText(key).toLowerCase()}=`, rawText(glob).toUpperCase()),
      );
    }
    for (const glob of tags ?? []) out.push(this.#valueDocs(TAG, rawText(glob).toUpperCase()));
    return out;
  }

  /** Postings of a term id (`doc << FIELD_BITS | fields`, sorted). */
  postings(id: number): Uint32Array {
    return this.store.postings(id);
  }

  /** The postings of term `id` for devices `from`..`to` (a long list is read only there). */
  postingsRange(id: number, from: number, to: number): Uint32Array {
    return this.store.postingsRange(id, from, to);
  }

  /** How many devices hold term `id` (without reading its postings). */
  count(id: number): number {
    const starts = this.store.starts();
    return (starts[id + 1] ?? 0) - (starts[id] ?? 0);
  }

  /** How many devices hold `term`. */
  frequency(term: string): number {
    const id = this.termId(term);
    const starts = this.store.starts();
    return id === undefined ? 0 : (starts[id + 1] ?? 0) - (starts[id] ?? 0);
  }

  /** The fields in which device `doc` holds term `id` (0 when it does not). */
  fieldsOf(id: number, doc: number): number {
    return this.store.fields(id, doc);
  }

  /** Term ids `[from, to)` of the terms that start with `prefix` (terms are sorted). */
  termRange(prefix: string): [number, number] {
    const terms = this.store.terms();
    const lower = (x: string) => {
      let lo = 0, hi = terms.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((terms[mid] ?? "") < x) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    return [lower(prefix), lower(prefix + "\uffff")];
  }

  /** Device `doc` as results show it. */
  device(doc: number): IndexedDevice {
    const s = this.store;
    return {
      name: s.name(doc),
      description: s.description(doc),
      units: s.units(doc),
      writable: s.writable(doc),
    };
  }

  /** Sorted, distinct devices of some terms. */
  docsOf(ids: readonly number[]): Uint32Array {
    if (ids.length === 1) {
      const p = this.postings(ids[0] ?? 0);
      const out = new Uint32Array(p.length);
      for (let i = 0; i < p.length; i++) out[i] = (p[i] ?? 0) >>> FIELD_BITS;
      return out;
    }
    const mark = new Uint8Array(this.size);
    let n = 0;
    for (const id of ids) {
      for (const v of this.postings(id)) {
        const d = v >>> FIELD_BITS;
        if (mark[d] === 0) {
          mark[d] = 1;
          n++;
        }
      }
    }
    const out = new Uint32Array(n);
    let k = 0;
    for (let d = 0; d < mark.length && k < n; d++) if (mark[d] === 1) out[k++] = d;
    return out;
  }

  /** Term ids of the name segments that satisfy a constraint. */
  segmentTerms(c: SegmentConstraint): number[] {
    if (c.how === "equals") {
      const id = this.termId(SEGMENT + c.text);
      return id === undefined ? [] : [id];
    }
    const key = `${c.how}:${c.text}`;
    const known = this.#segmentCache.get(key);
    if (known !== undefined) return known;
    const [from, to] = this.termRange(c.how === "startsWith" ? SEGMENT + c.text : SEGMENT);
    const out: number[] = [];
    for (let id = from; id < to; id++) {
      const seg = (this.term(id) ?? "").slice(SEGMENT.length);
      if (satisfies(seg, c)) out.push(id);
    }
    // The segment vocabulary does not change: a pattern paged through scans it once.
    if (this.#segmentCache.size >= 256) this.#segmentCache.clear();
    this.#segmentCache.set(key, out);
    return out;
  }

  /** Devices whose raw property or tag term (`prefix` + value) matches `glob`. */
  #valueDocs(prefix: string, glob: string): Uint8Array {
    const re = wildcard(glob);
    const [from, to] = this.termRange(prefix);
    const ids: number[] = [];
    for (let id = from; id < to; id++) {
      if (re.test((this.term(id) ?? "").slice(prefix.length))) ids.push(id);
    }
    const mark = new Uint8Array(this.size);
    for (const d of this.docsOf(ids)) mark[d] = 1;
    return mark;
  }

  /**
   * The candidates the pattern's segments allow: the devices of the most
   * selective constraint, intersected with the next ones while they are
   * selective enough to pay; undefined means every device.
   */
  #candidates(constraints: SegmentConstraint[]): Uint32Array | undefined {
    // A constraint met by many segments (H* of H0001…H2598) costs a union pass over every
    // device on top of its postings; one met by a single segment is its postings alone.
    const options = constraints.map((c) => {
      const ids = this.segmentTerms(c);
      let cost = 0;
      const starts = this.store.starts();
      for (const id of ids) cost += (starts[id + 1] ?? 0) - (starts[id] ?? 0);
      return { ids, cost, effort: cost + (ids.length > 1 ? this.size / 4 : 0) };
    }).sort((a, b) => a.effort - b.effort);
    const first = options[0];
    if (first === undefined || first.cost >= this.size) return undefined;
    let docs = this.docsOf(first.ids);
    for (const o of options.slice(1, 3)) {
      if (docs.length === 0 || o.cost > 8 * this.size / 10) break;
      if (o.ids.length > 1 && o.effort > 4 * docs.length) continue;
      docs = intersect(docs, this.docsOf(o.ids));
    }
    return docs;
  }

  /**
   * Devices matching a pattern (or regular expression) and the filters, one
   * page in name order, with the total over all pages.
   */
  match(q: PatternQuery): MatchPage {
    const offset = Math.max(0, Math.floor(q.offset ?? 0));
    const limit = Math.max(0, Math.floor(q.limit ?? DEFAULT_LIMIT));
    const pattern = (q.pattern ?? "").trim() || "*";
    const re = q.regex ?? wildcard(pattern);
    const constraints = q.regex ? [] : segmentConstraints(pattern);
    const subsystem = q.subsystem?.trim().toUpperCase();
    if (subsystem) constraints.push({ text: subsystem, how: "equals" });
    const filters = this.filterMasks(q.properties, q.tags);
    const candidates = this.#candidates(constraints);
    // `*TEXT*` with no separator in TEXT: the devices of the segments holding TEXT are the answer.
    const exact = !q.regex && !subsystem && candidates !== undefined &&
      /^\*+[^*?:._/-]+\*+$/.test(pattern);
    const n = candidates?.length ?? this.size;
    const devices: IndexedDevice[] = [];
    let total = 0;
    for (let i = 0; i < n; i++) {
      const doc = candidates ? candidates[i] ?? 0 : i;
      if (q.writable !== undefined && this.isWritable(doc) !== q.writable) continue;
      if (filters.some((f) => f[doc] !== 1)) continue;
      if (!exact || subsystem) {
        const name = this.nameOf(doc);
        if (subsystem && firstSegment(name) !== subsystem) continue;
        if (!exact && !re.test(name)) continue;
      }
      if (total >= offset && devices.length < limit) devices.push(this.device(doc));
      total++;
    }
    return { total, offset, devices };
  }
}

/** The first segment of a name, upper case (the subsystem of the simulator's names). */
export function firstSegment(name: string): string {
  const i = name.search(SEPARATORS);
  return (i < 0 ? name : name.slice(0, i)).toUpperCase();
}

/** Sorted ids present in both sorted lists. */
function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0, j = 0, k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] ?? 0, y = b[j] ?? 0;
    if (x === y) {
      out[k++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out.subarray(0, k);
}
