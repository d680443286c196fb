/**
 * An index's cache file read a piece at a time (`cache.ts` writes it): the
 * header, the term list, the postings of a query's terms (only where its
 * devices are, for a long list), the names it shows — a few hundred
 * kilobytes of a file of hundreds of megabytes.
 *
 * @module
 */
import type { IndexData } from "./data.ts";
import { TextColumn } from "./data.ts";
import { fieldsIn, type IndexStore, lowerBound, MemoryStore } from "./store.ts";
import { CacheDamage, checkedPostings, checkedStarts, nameSlices } from "./cache_reads.ts";

export { CacheDamage } from "./cache_reads.ts";

/** One section of the cache file: where it starts and how many bytes it holds. */
export interface Section {
  offset: number;
  length: number;
}

/** The sections of a cache file, by name. */
export type Sections = Record<
  | "terms"
  | "starts"
  | "postings"
  | "nameEnds"
  | "names"
  | "descEnds"
  | "descriptions"
  | "unitsOf"
  | "writable",
  Section
>;

/** What the cache file's header says beside its sections. */
export interface StoreHeader {
  sourceId: string;
  lexiconDigest: string;
  builtAt: number;
  count: number;
  unitsTable: string[];
  learned: Record<string, string[]>;
  learnedPlaces: Record<string, string>;
  sections: Sections;
}

const decoder = new TextDecoder();

/** Items read one at a time before a whole column is read instead. */
const PIECEMEAL = 2_000;
/** Postings lists up to this long are read whole even when a range of them is asked for. */
const RANGE_READ = 8_192;
/** Flag bytes read one at a time before the column (one byte per device) is read whole. */
const FLAGS_PIECEMEAL = 256;
/** Devices a page may span to be read in one piece per column. */
const WINDOW = 4_096;

/**
 * A cache file read a piece at a time with positioned reads; a column read
 * often is read whole once. Throws a RangeError when the file is shorter than
 * its header says (the caller treats the cache as absent).
 */
export class FileStore implements IndexStore {
  readonly #file: Deno.FsFile;
  readonly #h: StoreHeader;
  #terms: string[] | undefined;
  #starts: Uint32Array | undefined;
  readonly #postings = new Map<number, Uint32Array>();
  /** The last range of each long list read, and the devices it covers. */
  readonly #ranges = new Map<number, { from: number; to: number; slice: Uint32Array }>();
  #columns: {
    names?: TextColumn;
    descriptions?: TextColumn;
    unitsOf?: Uint32Array;
    writable?: Uint8Array;
  } = {};
  #reads = 0;
  /** What {@link prefetch} read for a page: devices `lo`..`hi`. */
  #window:
    | {
      lo: number;
      hi: number;
      names: string[];
      descriptions: string[];
      units: Uint32Array;
      flags: Uint8Array;
    }
    | undefined;
  #unitReads = 0;
  #writableReads = 0;
  #full: IndexData | undefined;
  /** Bytes read from the file so far. */
  bytesRead = 0;

  readonly #path: string;

  constructor(file: Deno.FsFile, header: StoreHeader, path: string) {
    this.#file = file;
    this.#h = header;
    this.#path = path;
  }

  get sourceId(): string {
    return this.#h.sourceId;
  }
  get lexiconDigest(): string {
    return this.#h.lexiconDigest;
  }
  get builtAt(): number {
    return this.#h.builtAt;
  }
  get size(): number {
    return this.#h.count;
  }
  get learned(): Record<string, string[]> {
    return this.#h.learned;
  }
  get learnedPlaces(): Record<string, string> {
    return this.#h.learnedPlaces;
  }

  /** `length` bytes at `offset` of the file. */
  #read(offset: number, length: number): Uint8Array {
    const buf = new Uint8Array(length);
    this.bytesRead += length;
    this.#file.seekSync(offset, Deno.SeekMode.Start);
    let at = 0;
    while (at < length) {
      const n = this.#file.readSync(buf.subarray(at));
      if (n === null || n === 0) throw new CacheDamage("the file ends early");
      at += n;
    }
    return buf;
  }

  /** `p`, once checked: devices this index holds, each once, in order. */
  #checked(p: Uint32Array): Uint32Array {
    return checkedPostings(p, this.size);
  }

  #section(name: keyof Sections): Uint8Array {
    const s = this.#h.sections[name];
    return this.#read(s.offset, s.length);
  }

  #u32(name: keyof Sections, from = 0, count?: number): Uint32Array {
    const s = this.#h.sections[name];
    const n = count ?? s.length / 4 - from;
    const bytes = this.#read(s.offset + from * 4, n * 4);
    return new Uint32Array(bytes.buffer, bytes.byteOffset, n);
  }

  terms(): string[] {
    if (this.#terms === undefined) {
      const text = decoder.decode(this.#section("terms"));
      const terms = text === "" ? [] : text.split("\n");
      if (terms.length + 1 !== this.starts().length) {
        throw new CacheDamage("the term list does not match its postings");
      }
      this.#terms = terms;
    }
    return this.#terms;
  }

  /** Where each term's postings start: checked in order, the last at the postings' end. */
  starts(): Uint32Array {
    if (this.#starts === undefined) {
      this.#starts = checkedStarts(this.#u32("starts"), this.#h.sections.postings.length / 4);
    }
    return this.#starts;
  }

  postingsRange(id: number, from: number, to: number): Uint32Array {
    const cached = this.#postings.get(id);
    const s = this.starts();
    const start = s[id] ?? 0, end = s[id + 1] ?? 0;
    // A short list, or one already read: the whole list is as cheap.
    if (cached !== undefined || end - start <= RANGE_READ) {
      const p = this.postings(id);
      return p.subarray(
        lowerBound((i) => p[i] ?? 0, p.length, from),
        lowerBound((i) => p[i] ?? 0, p.length, to + 1),
      );
    }
    const at = (i: number) => this.#u32("postings", start + i, 1)[0] ?? 0;
    const lo = lowerBound(at, end - start, from), hi = lowerBound(at, end - start, to + 1);
    const slice = hi > lo
      ? this.#checked(this.#u32("postings", start + lo, hi - lo))
      : new Uint32Array(0);
    // What was found among these devices is explained from the slice, without a read.
    if (this.#ranges.size > 256) this.#ranges.clear();
    this.#ranges.set(id, { from, to, slice });
    return slice;
  }

  fields(id: number, doc: number): number {
    const whole = this.#postings.get(id);
    if (whole) return fieldsIn(whole, doc);
    const r = this.#ranges.get(id);
    if (r && doc >= r.from && doc <= r.to) return fieldsIn(r.slice, doc);
    return fieldsIn(this.postings(id), doc);
  }

  postings(id: number): Uint32Array {
    let p = this.#postings.get(id);
    if (p === undefined) {
      const s = this.starts();
      const from = s[id] ?? 0, to = s[id + 1] ?? 0;
      p = to > from ? this.#checked(this.#u32("postings", from, to - from)) : new Uint32Array(0);
      if (this.#postings.size > 4096) this.#postings.clear();
      this.#postings.set(id, p);
    }
    return p;
  }

  /** Item `doc` of a text column, read alone until many have been read, then the column whole. */
  /**
   * Reads what a page of devices shows (names, descriptions, units, flags)
   * in one read per column when they lie close together, as a page does.
   */
  prefetch(docs: readonly number[]): void {
    if (docs.length < 2 || this.#columns.names) return;
    const lo = Math.min(...docs), hi = Math.max(...docs);
    if (lo < 0 || hi >= this.size || hi - lo > WINDOW) return;
    const base = lo > 0 ? lo - 1 : 0;
    const text = (ends: "nameEnds" | "descEnds", column: "names" | "descriptions") => {
      const e = this.#u32(ends, base, hi - base + 1);
      const start = lo > 0 ? (e[0] ?? 0) + 1 : 0;
      const end = e[e.length - 1] ?? 0;
      if (end > this.#h.sections[column].length) {
        throw new CacheDamage(`a ${column} end is past its column`);
      }
      const bytes = end > start
        ? this.#read(this.#h.sections[column].offset + start, end - start)
        : new Uint8Array(0);
      return decoder.decode(bytes).split("\n");
    };
    const w = this.#h.sections.writable;
    this.#window = {
      lo,
      hi,
      names: text("nameEnds", "names"),
      descriptions: text("descEnds", "descriptions"),
      units: this.#u32("unitsOf", lo, hi - lo + 1),
      flags: this.#read(w.offset + lo, hi - lo + 1),
    };
  }

  #text(doc: number, column: "names" | "descriptions"): string {
    const whole = this.#columns[column];
    if (whole) return whole.at(doc);
    const win = this.#window;
    if (win && doc >= win.lo && doc <= win.hi) return win[column][doc - win.lo] ?? "";
    if (doc < 0 || doc >= this.size) return "";
    if (++this.#reads > PIECEMEAL) return this.#wholeText(column).at(doc);
    const ends = column === "names" ? "nameEnds" : "descEnds";
    let start = 0, end: number;
    if (doc === 0) end = this.#u32(ends, 0, 1)[0] ?? 0;
    else {
      const pair = this.#u32(ends, doc - 1, 2);
      start = (pair[0] ?? 0) + 1;
      end = pair[1] ?? 0;
    }
    if (end <= start) return "";
    if (end > this.#h.sections[column].length) {
      throw new CacheDamage(`a ${column} end is past its column`);
    }
    return decoder.decode(this.#read(this.#h.sections[column].offset + start, end - start));
  }

  #wholeText(column: "names" | "descriptions"): TextColumn {
    let c = this.#columns[column];
    if (c === undefined) {
      c = TextColumn.parse(decoder.decode(this.#section(column)), this.size);
      this.#columns[column] = c;
    }
    return c;
  }

  name(doc: number): string {
    return this.#text(doc, "names");
  }

  description(doc: number): string {
    return this.#text(doc, "descriptions");
  }

  units(doc: number): string {
    const win = this.#window;
    if (win && doc >= win.lo && doc <= win.hi && !this.#columns.unitsOf) {
      return this.#h.unitsTable[win.units[doc - win.lo] ?? 0] ?? "";
    }
    const whole = this.#columns.unitsOf ??
      (++this.#unitReads > PIECEMEAL ? this.#columns.unitsOf = this.#u32("unitsOf") : undefined);
    const u = whole ? whole[doc] : this.#u32("unitsOf", doc, 1)[0];
    return this.#h.unitsTable[u ?? 0] ?? "";
  }

  /** The byte of the writability column for `doc` (read alone until many are, then whole). */
  #flags(doc: number): number {
    const win = this.#window;
    if (win && doc >= win.lo && doc <= win.hi) return win.flags[doc - win.lo] ?? 0;
    // One byte per device: past a few hundred, reading the column whole is cheaper.
    const whole = this.#columns.writable ??
      (++this.#writableReads > FLAGS_PIECEMEAL
        ? this.#columns.writable = this.#section("writable")
        : undefined);
    if (whole) return whole[doc] ?? 0;
    const s = this.#h.sections.writable;
    return doc >= 0 && doc < this.size ? this.#read(s.offset + doc, 1)[0] ?? 0 : 0;
  }

  writable(doc: number): boolean {
    return (this.#flags(doc) & 1) === 1;
  }

  kind(doc: number): number {
    return (this.#flags(doc) >> 1) & 3;
  }

  full(): IndexData {
    if (this.#full === undefined) {
      const starts = this.starts();
      const postings = this.#u32("postings");
      if ((starts[starts.length - 1] ?? 0) !== postings.length) {
        throw new CacheDamage("the postings do not match their starts");
      }
      this.#columns.unitsOf ??= this.#u32("unitsOf");
      this.#columns.writable ??= this.#section("writable");
      this.#full = {
        sourceId: this.sourceId,
        lexiconDigest: this.lexiconDigest,
        builtAt: this.builtAt,
        names: this.#wholeText("names"),
        descriptions: this.#wholeText("descriptions"),
        unitsTable: this.#h.unitsTable,
        unitsOf: this.#columns.unitsOf,
        writable: this.#columns.writable,
        terms: this.terms(),
        starts,
        postings,
        learned: this.learned,
        learnedPlaces: this.learnedPlaces,
      };
      this.#postings.clear();
    }
    return this.#full;
  }

  async *nameChunks(): AsyncIterable<string[]> {
    const whole = this.#columns.names;
    if (whole) {
      yield* new MemoryStore({ names: whole } as IndexData).nameChunks();
      return;
    }
    yield* nameSlices(this.#path, this.#h.sections.names);
  }

  /** Closes the file (the store cannot be read afterwards). */
  close(): void {
    try {
      this.#file.close();
    } catch { /* already closed */ }
  }
}
