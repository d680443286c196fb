/**
 * Building the device index from {@link IndexRecord}s: each record's name
 * segments, description, properties and tags become terms through the
 * {@link Lexicon}; each term keeps the sorted list of devices that hold it.
 *
 * @module
 */
import type { IndexRecord, IndexSource } from "./record.ts";
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
} from "./data.ts";

/** A growing list of postings of one term. */
class Postings {
  buf = new Uint32Array(4);
  n = 0;
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
  /** Terms of the record being added → fields. */
  readonly #doc = new Map<string, number>();
  #sorted = true;

  constructor(lexicon: Lexicon, readonly sourceId: string, readonly lexiconDigest: string) {
    this.#lexicon = lexicon;
  }

  /** Number of records added so far. */
  get size(): number {
    return this.#names.length;
  }

  /** Adds one device; a name already added is refused (a source must not repeat names). */
  add(rec: IndexRecord): void {
    const id = this.#names.length;
    if (id >= MAX_DOCS) throw new RangeError(`device index: more than ${MAX_DOCS} devices`);
    const prev = this.#names[id - 1];
    if (prev !== undefined && !(prev < rec.name)) this.#sorted = false;
    this.#names.push(rec.name);
    this.#descriptions.push(rec.description);
    let u = this.#units.get(rec.units);
    if (u === undefined) this.#units.set(rec.units, u = this.#units.size);
    this.#unitsOf.push(u);
    this.#writable.push(rec.writable ? 1 : 0);

    const doc = this.#doc;
    doc.clear();
    const mark = (term: string, field: number) => doc.set(term, (doc.get(term) ?? 0) | field);
    for (const seg of rec.name.split(SEPARATORS)) {
      if (seg !== "") mark(SEGMENT + seg.toUpperCase(), Field.NAME);
    }
    const lex = this.#lexicon;
    for (const t of lex.analyseWords(words(rec.name))) mark(t.term, Field.NAME);
    for (const t of lex.analyse(rec.description)) mark(t.term, Field.DESC);
    for (const [key, value] of Object.entries(rec.properties)) {
      const k = key.toLowerCase();
      mark(`${PROPERTY}${k}=${value.toUpperCase()}`, Field.PROP);
      const place = lex.place(k);
      const n = Number.parseInt(value, 10);
      if (place !== undefined && Number.isFinite(n)) mark(`${place}=${n}`, Field.PROP);
      else if (k !== "units") { for (const t of lex.analyse(value)) mark(t.term, Field.PROP); }
    }
    for (const tag of rec.tags) {
      mark(TAG + tag.toUpperCase(), Field.TAG);
      for (const t of lex.analyse(tag)) mark(t.term, Field.TAG);
    }
    for (const [term, fields] of doc) {
      let p = this.#postings.get(term);
      if (p === undefined) this.#postings.set(term, p = new Postings());
      p.push((id << FIELD_BITS | fields) >>> 0);
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
      names,
      descriptions,
      unitsTable: [...this.#units.keys()],
      unitsOf,
      writable,
      terms,
      starts,
      postings,
    };
  }
}
