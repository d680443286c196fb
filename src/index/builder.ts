/**
 * Building the device index from {@link IndexRecord}s: each record's name
 * segments, description, properties, tags and units become terms through the
 * {@link Lexicon}; each term keeps the sorted list of devices that hold it.
 *
 * Texts of a facility repeat with other numbers ("BPM 01 horizontal
 * position", "BPM 02 …"), so each text is analysed once per template (its
 * numbers masked) and the numbers are put back: a 10^6-name build pays for a
 * few thousand analyses, not a million.
 *
 * @module
 */
import type { IndexRecord, IndexSource } from "./record.ts";
import { bytesText } from "../util/bounded_read.ts";
import { bounded, checkName, MAX_TEXT_CHARS } from "./record_bounds.ts";
import type { Lexicon } from "./lexicon.ts";
import { NUMBER_MARK, words } from "./lexicon.ts";
import {
  Field,
  FIELD_BITS,
  type IndexData,
  MAX_DOCS,
  PROPERTY,
  rawText,
  SEGMENT,
  SEPARATORS,
  TAG,
  TextColumn,
} from "./data.ts";
import { Learner } from "./learn.ts";
import { NOT_WORDS, NUMERIC, STATE_RECORDS } from "./property_words.ts";
import {
  applyPlaces,
  markKinds,
  masked,
  mergeNamed,
  NONE,
  packPostings,
  Postings,
  type TemplateTerm,
  type Value,
} from "./postings.ts";

/** Characters of descriptions and values the builder's memos may hold together. */
const MEMO_TEXT_CHARS = 16 * 1024 * 1024;

/** Work done between two turns of the event loop while a source is added, ms. */
const SLICE_MS = 20;

/** Collects records, then {@link IndexBuilder.finish}es into {@link IndexData}. */
export class IndexBuilder {
  readonly #lexicon: Lexicon;
  readonly #names: string[] = [];
  readonly #descriptions: string[] = [];
  readonly #units = new Map<string, number>();
  readonly #unitsOf: number[] = [];
  readonly #writable: number[] = [];
  readonly #postings = new Map<string, Postings>();
  /** Templates of names and of other texts (descriptions, values), kept apart. */
  readonly #templates = [new Map<string, TemplateTerm[]>(), new Map<string, TemplateTerm[]>()];
  readonly #learner = new Learner();
  /** Raw name segment → its postings (`s:SEG`), so a repeated segment costs one look-up. */
  readonly #segments = new Map<string, Postings>();
  /**
   * Property key → raw value → its postings (`p:key=VALUE`) and, for a value
   * without digits, its analysed terms (values repeat: "QUAD", "setpoint", "A").
   */
  readonly #values = new Map<string, Map<string, Value>>();
  /**
   * Characters of the texts the two memos above hold: past
   * {@link MEMO_TEXT_CHARS} both start again, so a namespace whose every
   * description and value differs holds no more than that in memos.
   */
  #memoChars = 0;
  /** Tag → its postings (`t:TAG`) and analysed terms. */
  readonly #tags = new Map<string, { raw: Postings; terms: TemplateTerm[] }>();
  /** Property keys as written → lower case. */
  readonly #keys = new Map<string, string>();
  /** Working lists of one record, reused. */
  readonly #nameTerms: string[] = [];
  readonly #nameNumbers: string[] = [];
  readonly #told: string[] = [];
  readonly #places: string[] = [];
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

  #postingsOf(term: string): Postings {
    let p = this.#postings.get(term);
    if (p === undefined) this.#postings.set(term, p = new Postings());
    return p;
  }

  #mark(p: Postings, id: number, field: number): void {
    if (p.last === id) {
      p.buf[p.n - 1] = ((p.buf[p.n - 1] ?? 0) | field) >>> 0;
    } else {
      p.push((id << FIELD_BITS | field) >>> 0);
      p.last = id;
    }
  }

  /** The analysed terms of a masked text (once per template). */
  #template(key: string, name: boolean): TemplateTerm[] {
    const templates = this.#templates[name ? 0 : 1] as Map<string, TemplateTerm[]>;
    let template = templates.get(key);
    if (template === undefined) {
      template = this.#lexicon.analyseWords(words(key), name).map((t): TemplateTerm => {
        if (!t.term.includes(NUMBER_MARK)) return { fixed: t.term };
        const parts = t.term.split(/\uE000([0-9]+)/);
        const marks: number[] = [];
        const texts: string[] = [];
        parts.forEach((p, i) => i % 2 === 1 ? marks.push(Number(p)) : texts.push(p));
        return { parts: texts, marks, byNumber: new Map() };
      });
      if (templates.size > 200_000) templates.clear();
      this.#remember(key.length);
      templates.set(key, template);
    }
    return template;
  }

  /**
   * The terms of `text`, marked on device `id` in `field`; its fixed terms
   * are added to `fixed`, those with numbers to `numbered` (when given).
   */
  #markText(
    text: string,
    id: number,
    field: number,
    name: boolean,
    fixed?: string[],
    numbered?: string[],
  ): void {
    if (text === "") return;
    const { key, numbers } = masked(text);
    this.#apply(this.#template(key, name), numbers, id, field, fixed, numbered);
  }

  #apply(
    template: TemplateTerm[],
    numbers: string[],
    id: number,
    field: number,
    fixed?: string[],
    numbered?: string[],
  ): void {
    for (const t of template) {
      if ("fixed" in t) {
        t.postings ??= this.#postingsOf(t.fixed);
        this.#mark(t.postings, id, field);
        fixed?.push(t.fixed);
        continue;
      }
      const key = t.marks.length === 1
        ? numbers[t.marks[0] ?? 0] ?? ""
        : t.marks.map((m) => numbers[m]).join(" ");
      let p = t.byNumber.get(key);
      if (p === undefined || numbered) {
        let term = t.parts[0] ?? "";
        for (let i = 0; i < t.marks.length; i++) {
          term += (numbers[t.marks[i] ?? 0] ?? "") + (t.parts[i + 1] ?? "");
        }
        p ??= this.#postingsOf(term);
        if (t.byNumber.size > 10_000) t.byNumber.clear();
        t.byNumber.set(key, p);
        numbered?.push(term);
      }
      this.#mark(p, id, field);
    }
  }

  /**
   * Adds one device, within the caps above (longer texts cut); a name already
   * added is refused (a source must not repeat names), and so is a name past
   * {@link MAX_NAME_CHARS} or a namespace past {@link MAX_TEXT_CHARS}.
   */
  add(given: IndexRecord): void {
    const id = this.#names.length;
    if (id >= MAX_DOCS) throw new RangeError(`device index: more than ${MAX_DOCS} devices`);
    checkName(given.name, this.sourceId);
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

    const lex = this.#lexicon;
    const segments = rec.name.split(SEPARATORS);
    for (const seg of segments) {
      if (seg === "") continue;
      let p = this.#segments.get(seg);
      if (p === undefined) {
        p = this.#postingsOf(SEGMENT + seg.toUpperCase());
        if (this.#segments.size > 500_000) this.#segments.clear();
        this.#segments.set(seg, p);
      }
      this.#mark(p, id, Field.NAME);
    }
    const learn = this.#learner.wants();
    const nameTerms = this.#nameTerms, nameNumbers = this.#nameNumbers;
    const told = this.#told, places = this.#places;
    nameTerms.length =
      nameNumbers.length =
      told.length =
      places.length =
        0;
    this.#markText(rec.name, id, Field.NAME, true, learn ? nameTerms : undefined, nameNumbers);
    this.#markText(rec.description, id, Field.DESC, false, learn ? told : undefined, places);
    for (const key in rec.properties) {
      const value = rec.properties[key] ?? "";
      let k = this.#keys.get(key);
      if (k === undefined) this.#keys.set(key, k = rawText(key).toLowerCase());
      const v = this.#rawValue(k, value);
      this.#mark(v.raw, id, Field.PROP);
      // A value that is only a number (a position, a length, an index) says nothing to words.
      if (NOT_WORDS.has(k) || value === "" || NUMERIC.test(value) && lex.place(k) === undefined) {
        continue;
      }
      const place = lex.place(k);
      const digits = place === undefined ? undefined : /[0-9]+/.exec(value)?.[0];
      if (place !== undefined && digits !== undefined) {
        const term = `${place}=${Number.parseInt(digits, 10)}`;
        this.#mark(this.#postingsOf(term), id, Field.PROP);
        places.push(term);
        continue;
      }
      // A value that is a segment of the name ("RING", "COR") adds nothing the name did not say.
      if (segments.includes(value)) {
        if (learn) { for (const t of v.terms ?? []) if ("fixed" in t) told.push(t.fixed); }
        continue;
      }
      if (v.terms) this.#apply(v.terms, NONE, id, Field.PROP, learn ? told : undefined);
      else this.#markText(value, id, Field.PROP, false, learn ? told : undefined);
    }
    for (const tag of rec.tags) {
      let t = this.#tags.get(tag);
      if (t === undefined) {
        const { key, numbers } = masked(tag);
        const raw = this.#postingsOf(TAG + rawText(tag).toUpperCase());
        t = { raw, terms: this.#template(key, false) };
        if (numbers.length) t.terms = this.#lexicon.analyse(tag).map((x) => ({ fixed: x.term }));
        if (this.#tags.size > 100_000) this.#tags.clear();
        this.#tags.set(tag, t);
      }
      this.#mark(t.raw, id, Field.TAG);
      this.#apply(t.terms, NONE, id, Field.TAG, learn ? told : undefined);
    }
    const measured = rec.units ? lex.unitConcept(rec.units) : undefined;
    if (measured !== undefined) {
      this.#mark(this.#postingsOf(measured), id, Field.PROP);
      told.push(measured);
    }
    // A device that can be set is a setpoint, whatever its name says; a binary input a state.
    if (rec.writable) this.#mark(this.#postingsOf("setpt"), id, Field.TAG);
    const recordType = rec.properties.recordType ?? rec.properties.recordtype;
    if (recordType && STATE_RECORDS.has(recordType)) {
      this.#mark(this.#postingsOf("status"), id, Field.TAG);
    }
    if (learn) this.#learner.observe(nameTerms, told, nameNumbers, places);
  }

  /** The raw property term `p:key=VALUE` of a value, and its analysed terms when it has no digits. */
  /** Counts `chars` more memoised text, first emptying the memos when they are full. */
  #remember(chars: number): void {
    this.#memoChars += chars;
    if (this.#memoChars <= MEMO_TEXT_CHARS) return;
    for (const t of this.#templates) t.clear();
    for (const byValue of this.#values.values()) byValue.clear();
    this.#memoChars = chars;
  }

  #rawValue(key: string, value: string): Value {
    let byValue = this.#values.get(key);
    if (byValue === undefined) this.#values.set(key, byValue = new Map());
    let v = byValue.get(value);
    if (v === undefined) {
      const raw = this.#postingsOf(`${PROPERTY}${key}=${rawText(value).toUpperCase()}`);
      v = /[0-9]/.test(value) ? { raw } : { raw, terms: this.#template(value, false) };
      if (byValue.size > 200_000) byValue.clear();
      this.#remember(value.length);
      byValue.set(value, v);
    }
    return v;
  }

  /**
   * Adds every record of a source, page by page, giving the event loop a
   * turn every few milliseconds of work: a prompt that waits for keys while
   * the index builds behind it stays responsive.
   */
  async addSource(source: IndexSource, signal?: AbortSignal): Promise<void> {
    let since = performance.now();
    for await (const page of source.records(signal)) {
      signal?.throwIfAborted();
      for (let i = 0; i < page.length; i++) {
        this.add(page[i] as IndexRecord);
        if ((i & 255) === 255 && performance.now() - since > SLICE_MS) {
          await new Promise((r) => setTimeout(r, 0));
          signal?.throwIfAborted();
          since = performance.now();
        }
      }
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
    const learned = this.#learner.learned(this.#lexicon);
    for (const [word, concepts] of Object.entries(learned.words)) {
      for (const c of concepts) mergeNamed(this.#postings, word, c);
    }
    applyPlaces(this.#postings, learned.places);
    markKinds(this.#postings, writable, rank);
    const { terms, starts, postings } = packPostings(this.#postings, rank);
    for (const t of this.#templates) t.clear();
    this.#segments.clear();
    this.#values.clear();
    this.#tags.clear();
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
      learned: learned.words,
      learnedPlaces: learned.places,
    };
  }
}
