/**
 * Where an index's columns are: in memory (just built), or in its cache file,
 * read a piece at a time (`cache.ts`): a search from the command line reads
 * the header, the term list, the postings of its own terms and the names of
 * the devices it shows — a few hundred kilobytes of a file of hundreds of
 * megabytes — instead of loading the whole index before the query runs.
 *
 * @module
 */
import { type IndexData, TextColumn } from "./data.ts";

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
  name(doc: number): string;
  description(doc: number): string;
  units(doc: number): string;
  writable(doc: number): boolean;
  /** Everything in memory (patterns, completion, benchmarks). */
  full(): IndexData;
}

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
    return this.data.writable[doc] === 1;
  }
  full(): IndexData {
    return this.data;
  }
}

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
  #columns: {
    names?: TextColumn;
    descriptions?: TextColumn;
    unitsOf?: Uint32Array;
    writable?: Uint8Array;
  } = {};
  #reads = 0;
  #full: IndexData | undefined;
  /** Bytes read from the file so far. */
  bytesRead = 0;

  constructor(file: Deno.FsFile, header: StoreHeader) {
    this.#file = file;
    this.#h = header;
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
      if (n === null || n === 0) throw new RangeError("device index cache: the file ends early");
      at += n;
    }
    return buf;
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
      this.#terms = text === "" ? [] : text.split("\n");
    }
    return this.#terms;
  }

  starts(): Uint32Array {
    this.#starts ??= this.#u32("starts");
    return this.#starts;
  }

  postings(id: number): Uint32Array {
    let p = this.#postings.get(id);
    if (p === undefined) {
      const s = this.starts();
      const from = s[id] ?? 0, to = s[id + 1] ?? 0;
      p = to > from ? this.#u32("postings", from, to - from) : new Uint32Array(0);
      if (this.#postings.size > 4096) this.#postings.clear();
      this.#postings.set(id, p);
    }
    return p;
  }

  /** Item `doc` of a text column, read alone until many have been read, then the column whole. */
  #text(doc: number, column: "names" | "descriptions"): string {
    const whole = this.#columns[column];
    if (whole) return whole.at(doc);
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
    this.#columns.unitsOf ??= this.#u32("unitsOf");
    return this.#h.unitsTable[this.#columns.unitsOf[doc] ?? 0] ?? "";
  }

  writable(doc: number): boolean {
    this.#columns.writable ??= this.#section("writable");
    return this.#columns.writable[doc] === 1;
  }

  full(): IndexData {
    if (this.#full === undefined) {
      const starts = this.starts();
      const postings = this.#u32("postings");
      if ((starts[starts.length - 1] ?? 0) !== postings.length) {
        throw new RangeError("device index cache: the postings do not match their starts");
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

  /** Closes the file (the store cannot be read afterwards). */
  close(): void {
    try {
      this.#file.close();
    } catch { /* already closed */ }
  }
}
