/**
 * Building the device index from {@link IndexRecord}s: each record's name
 * segments, description, properties and tags become terms through the
 * {@link Lexicon}; each term keeps the sorted list of devices that hold it.
 *
 * @module
 */
import type { IndexRecord, IndexSource } from "./record.ts";
import { bytesText } from "../util/bounded_read.ts";
import type { Lexicon } from "./lexicon.ts";
import { words } from "./lexicon.ts";
import {
  Field,
  FIELD_BITS,
  type IndexData,
  MAX_DOCS,
  PROPERTY,
  SEGMENT,
  SEPARATORS,
  TAG,
  TextColumn,
} from "./data.ts";

/**
 * Properties whose values repeat the name (or are units): kept for filters
 * as raw `p:` terms, not analysed again as words.
 */
const FROM_NAME = new Set(["section", "family", "device", "index", "signal", "units"]);

/**
 * What the index keeps of one device, at most: a service may send records of
 * any size within its body cap (ChannelFinder pages of 16 MiB, a thousand
 * channels of 14 KB each grew the process past 4 GB), so longer texts are
 * cut, further properties and tags left out, and the whole is bounded.
 * EPICS descriptions hold 40 characters; TANGO's are a sentence or two.
 */
export const MAX_NAME_CHARS = 1024;
export const MAX_DESCRIPTION_CHARS = 512;
/** A property's key or value, a units string, a tag. */
export const MAX_VALUE_CHARS = 256;
/** Properties, and tags, of one device. */
export const MAX_PROPERTIES = 64;
/** Characters of names, descriptions, units, properties and tags of the whole index. */
export const MAX_TEXT_CHARS = 256 * 1024 * 1024;

/**
 * `text` cut to `n` characters (never half a surrogate pair), as a string of
 * its own: a slice would keep the whole original alive. Texts within `n` are
 * kept as they are (copying every one made a build of a million devices
 * half again as slow).
 */
function cut(text: string, n: number): string {
  if (text.length <= n) return text;
  let kept = text.slice(0, n);
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  // A slice of a concatenation is a slice of a fresh copy, not of the original.
  return ` ${kept}`.slice(1);
}

/** A record within the caps above, and the characters of it the index keeps. */
function bounded(rec: IndexRecord): { rec: IndexRecord; chars: number } {
  let chars = rec.name.length;
  const description = cut(rec.description, MAX_DESCRIPTION_CHARS);
  const units = cut(rec.units, MAX_VALUE_CHARS);
  chars += description.length + units.length;
  let properties = rec.properties;
  let count = 0;
  let within = true;
  for (const key in properties) {
    const value = properties[key] ?? "";
    if (
      ++count > MAX_PROPERTIES || key.length > MAX_VALUE_CHARS || value.length > MAX_VALUE_CHARS
    ) {
      within = false;
      break;
    }
    chars += key.length + value.length;
  }
  if (!within) {
    properties = {};
    chars = rec.name.length + description.length + units.length;
    for (const [key, value] of Object.entries(rec.properties).slice(0, MAX_PROPERTIES)) {
      const k = cut(key, MAX_VALUE_CHARS), v = cut(value, MAX_VALUE_CHARS);
      properties[k] = v;
      chars += k.length + v.length;
    }
  }
  let tags = rec.tags;
  if (tags.length > MAX_PROPERTIES || tags.some((t) => t.length > MAX_VALUE_CHARS)) {
    tags = tags.slice(0, MAX_PROPERTIES).map((t) => cut(t, MAX_VALUE_CHARS));
  }
  for (const t of tags) chars += t.length;
  return {
    rec: { name: rec.name, description, units, writable: rec.writable, properties, tags },
    chars,
  };
}

/** A growing list of postings of one term. */
class Postings {
  buf = new Uint32Array(4);
  n = 0;
  /** The document of the last posting, so a term seen twice in one device is one posting. */
  last = -1;
  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }
}

/** Collects records, then {@link IndexBuilder.finish}es into {@link IndexData}. */
export class IndexBuilder {
  readonly #lexicon: Lexicon;
  readonly #names: string[] = [];
  readonly #descriptions: string[] = [];
  readonly #units = new Map<string, number>();
  readonly #unitsOf: number[] = [];
  readonly #writable: number[] = [];
  readonly #postings = new Map<string, Postings>();
  #sorted = true;
  #text = 0;

  constructor(
    lexicon: Lexicon,
    readonly sourceId: string,
    readonly lexiconDigest: string,
    readonly maxTextChars = MAX_TEXT_CHARS,
  ) {
    this.#lexicon = lexicon;
  }

  /** Number of records added so far. */
  get size(): number {
    return this.#names.length;
  }

  /**
   * Adds one device, within the caps above (longer texts cut); a name already
   * added is refused (a source must not repeat names), and so is a name past
   * {@link MAX_NAME_CHARS} or a namespace past {@link MAX_TEXT_CHARS}.
   */
  add(given: IndexRecord): void {
    const id = this.#names.length;
    if (id >= MAX_DOCS) throw new RangeError(`device index: more than ${MAX_DOCS} devices`);
    if (given.name.length > MAX_NAME_CHARS) {
      throw new RangeError(
        `device index: a name from ${this.sourceId} is longer than ${MAX_NAME_CHARS} characters ` +
          `(${JSON.stringify(given.name.slice(0, 80))}…)`,
      );
    }
    if (/[\n\r]/.test(given.name)) {
      throw new Error(
        `device index: ${JSON.stringify(given.name)} from ${this.sourceId} holds a line break`,
      );
    }
    const { rec, chars } = bounded(given);
    this.#text += chars;
    if (this.#text > this.maxTextChars) {
      throw new RangeError(
        `device index: ${this.sourceId} holds more than ${bytesText(this.maxTextChars)} ` +
          `of names, descriptions and properties (at its device ${
            id + 1
          }); the index keeps no more`,
      );
    }
    const prev = this.#names[id - 1];
    if (prev !== undefined && !(prev < rec.name)) this.#sorted = false;
    this.#names.push(rec.name);
    this.#descriptions.push(rec.description.replace(/[\n\r]/g, " "));
    let u = this.#units.get(rec.units);
    if (u === undefined) this.#units.set(rec.units, u = this.#units.size);
    this.#unitsOf.push(u);
    this.#writable.push(rec.writable ? 1 : 0);

    const postings = this.#postings;
    const mark = (term: string, field: number) => {
      let p = postings.get(term);
      if (p === undefined) postings.set(term, p = new Postings());
      if (p.last === id) {
        p.buf[p.n - 1] = ((p.buf[p.n - 1] ?? 0) | field) >>> 0;
      } else {
        p.push((id << FIELD_BITS | field) >>> 0);
        p.last = id;
      }
    };
    for (const seg of rec.name.split(SEPARATORS)) {
      if (seg !== "") mark(SEGMENT + seg.toUpperCase(), Field.NAME);
    }
    const lex = this.#lexicon;
    for (const t of lex.analyseWords(words(rec.name))) mark(t.term, Field.NAME);
    for (const t of lex.analyse(rec.description)) mark(t.term, Field.DESC);
    for (const [key, value] of Object.entries(rec.properties)) {
      const k = key.toLowerCase();
      // The device segment is already a name-segment term; a second copy would double the terms.
      if (k !== "device") mark(`${PROPERTY}${k}=${value.toUpperCase()}`, Field.PROP);
      const place = lex.place(k);
      const n = Number.parseInt(value, 10);
      if (place !== undefined && Number.isFinite(n)) mark(`${place}=${n}`, Field.PROP);
      else if (!FROM_NAME.has(k)) {
        for (const t of lex.analyseShort(value)) mark(t.term, Field.PROP);
      }
    }
    for (const tag of rec.tags) {
      mark(TAG + tag.toUpperCase(), Field.TAG);
      for (const t of lex.analyseShort(tag)) mark(t.term, Field.TAG);
    }
  }

  /** Adds every record of a source, page by page. */
  async addSource(source: IndexSource, signal?: AbortSignal): Promise<void> {
    for await (const page of source.records(signal)) {
      signal?.throwIfAborted();
      for (const rec of page) this.add(rec);
    }
  }

  /** The finished index data, documents in name order; a repeated name is refused. */
  finish(now = Date.now()): IndexData {
    const n = this.#names.length;
    let rank: Uint32Array | undefined;
    let names = this.#names;
    let descriptions = this.#descriptions;
    let unitsOf = Uint32Array.from(this.#unitsOf);
    let writable = Uint8Array.from(this.#writable);
    if (!this.#sorted) {
      const order = Array.from({ length: n }, (_, i) => i);
      order.sort((a, b) => {
        const x = names[a] ?? "", y = names[b] ?? "";
        return x < y ? -1 : x > y ? 1 : 0;
      });
      rank = new Uint32Array(n);
      order.forEach((old, i) => (rank as Uint32Array)[old] = i);
      names = order.map((i) => this.#names[i] ?? "");
      descriptions = order.map((i) => this.#descriptions[i] ?? "");
      unitsOf = Uint32Array.from(order, (i) => this.#unitsOf[i] ?? 0);
      writable = Uint8Array.from(order, (i) => this.#writable[i] ?? 0);
    }
    for (let i = 1; i < n; i++) {
      if (names[i] === names[i - 1]) {
        throw new Error(`device index: ${names[i]} is listed twice by ${this.sourceId}`);
      }
    }
    const terms = [...this.#postings.keys()].sort();
    const starts = new Uint32Array(terms.length + 1);
    let total = 0;
    terms.forEach((t, i) => {
      starts[i] = total;
      total += this.#postings.get(t)?.n ?? 0;
    });
    starts[terms.length] = total;
    const postings = new Uint32Array(total);
    const mask = (1 << FIELD_BITS) - 1;
    terms.forEach((t, i) => {
      const p = this.#postings.get(t);
      if (p === undefined) return;
      const at = starts[i] ?? 0;
      const view = postings.subarray(at, at + p.n);
      view.set(p.buf.subarray(0, p.n));
      if (rank !== undefined) {
        for (let j = 0; j < view.length; j++) {
          const v = view[j] ?? 0;
          view[j] = ((rank[v >>> FIELD_BITS] ?? 0) << FIELD_BITS | (v & mask)) >>> 0;
        }
        view.sort();
      }
      this.#postings.delete(t);
    });
    return {
      sourceId: this.sourceId,
      lexiconDigest: this.lexiconDigest,
      builtAt: now,
      names: TextColumn.from(names),
      descriptions: TextColumn.from(descriptions),
      unitsTable: [...this.#units.keys()],
      unitsOf,
      writable,
      terms,
      starts,
      postings,
    };
  }
}
