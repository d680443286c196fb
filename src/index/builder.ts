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
import type { Lexicon } from "./lexicon.ts";
import { NUMBER_MARK, words } from "./lexicon.ts";
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
import { Learner } from "./learn.ts";

/**
 * Properties that say nothing about what a device is (where its IOC runs,
 * when it was seen): kept as raw `p:` terms for filters, not read as words.
 */
const NOT_WORDS = new Set([
  "hostname",
  "iocname",
  "iocid",
  "iocip",
  "recceiverid",
  "time",
  "pvstatus",
  "owner",
  "alias",
  "recordtype",
  "id",
  "uid",
  "port",
  "pvname",
  "device",
  "index",
]);

/** EPICS record types that hold a state (a binary or multi-bit input). */
const STATE_RECORDS = new Set(["bi", "mbbi", "mbbidirect"]);

/** A growing list of postings of one term. */
export class Postings {
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

/** One analysed term of a template: fixed (resolved once) or holding the template's numbers. */
type TemplateTerm = { fixed: string; postings?: Postings } | { parts: string[]; marks: number[] };

/** A text with its numbers masked (`\uE000k` for the k-th), and those numbers. */
function masked(text: string): { key: string; numbers: string[] } {
  const numbers: string[] = [];
  const key = text.replace(/[0-9]+/g, (m) => {
    numbers.push(String(Number.parseInt(m, 10)));
    return `${NUMBER_MARK}${numbers.length - 1} `;
  });
  return { key, numbers };
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
  readonly #templates = new Map<string, TemplateTerm[]>();
  readonly #learner = new Learner();
  #sorted = true;

  constructor(lexicon: Lexicon, readonly sourceId: string, readonly lexiconDigest: string) {
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

  /**
   * The terms of `text` (analysed once per template), marked on device `id`
   * in `field`; its fixed terms are added to `fixed`, those with numbers to `numbered`.
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
    const tkey = `${name ? "n" : "t"}${key}`;
    let template = this.#templates.get(tkey);
    if (template === undefined) {
      template = this.#lexicon.analyseWords(words(key), name).map((t): TemplateTerm => {
        if (!t.term.includes(NUMBER_MARK)) return { fixed: t.term };
        const parts = t.term.split(/\uE000([0-9]+)/);
        const marks: number[] = [];
        const texts: string[] = [];
        parts.forEach((p, i) => i % 2 === 1 ? marks.push(Number(p)) : texts.push(p));
        return { parts: texts, marks };
      });
      if (this.#templates.size > 200_000) this.#templates.clear();
      this.#templates.set(tkey, template);
    }
    for (const t of template) {
      if ("fixed" in t) {
        t.postings ??= this.#postingsOf(t.fixed);
        this.#mark(t.postings, id, field);
        fixed?.push(t.fixed);
        continue;
      }
      let term = t.parts[0] ?? "";
      for (let i = 0; i < t.marks.length; i++) {
        term += (numbers[t.marks[i] ?? 0] ?? "") + (t.parts[i + 1] ?? "");
      }
      this.#mark(this.#postingsOf(term), id, field);
      numbered?.push(term);
    }
  }

  /** Adds one device. */
  add(rec: IndexRecord): void {
    const id = this.#names.length;
    if (id >= MAX_DOCS) throw new RangeError(`device index: more than ${MAX_DOCS} devices`);
    if (/[\n\r]/.test(rec.name)) {
      throw new Error(
        `device index: ${JSON.stringify(rec.name)} from ${this.sourceId} holds a line break`,
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
    for (const seg of rec.name.split(SEPARATORS)) {
      if (seg !== "") this.#mark(this.#postingsOf(SEGMENT + seg.toUpperCase()), id, Field.NAME);
    }
    const nameTerms: string[] = [];
    const nameNumbers: string[] = [];
    const told: string[] = [];
    const places: string[] = [];
    this.#markText(rec.name, id, Field.NAME, true, nameTerms, nameNumbers);
    this.#markText(rec.description, id, Field.DESC, false, told, places);
    for (const [key, value] of Object.entries(rec.properties)) {
      const k = key.toLowerCase();
      this.#mark(this.#postingsOf(`${PROPERTY}${k}=${value.toUpperCase()}`), id, Field.PROP);
      if (NOT_WORDS.has(k) || value === "") continue;
      const place = lex.place(k);
      const digits = place === undefined ? undefined : /[0-9]+/.exec(value)?.[0];
      if (place !== undefined && digits !== undefined) {
        const term = `${place}=${Number.parseInt(digits, 10)}`;
        this.#mark(this.#postingsOf(term), id, Field.PROP);
        places.push(term);
        continue;
      }
      this.#markText(value, id, Field.PROP, false, told);
    }
    for (const tag of rec.tags) {
      this.#mark(this.#postingsOf(TAG + tag.toUpperCase()), id, Field.TAG);
      this.#markText(tag, id, Field.TAG, false, told);
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
    this.#learner.observe(nameTerms, told, nameNumbers, places.filter((p) => p.includes("=")));
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
    const learned = this.#learner.learned(this.#lexicon);
    for (const [word, concepts] of Object.entries(learned.words)) {
      for (const c of concepts) this.#merge(word, c);
    }
    this.#applyPlaces(learned.places);
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
    this.#templates.clear();
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

  /**
   * A name word whose number is always the device's place ("c" of `C03` and
   * cell 3): every `c#N` of a name is that place, found in the name.
   */
  #applyPlaces(places: Record<string, string>): void {
    for (const [word, place] of Object.entries(places)) {
      const prefix = `${word}#`;
      for (const term of [...this.#postings.keys()]) {
        if (!term.startsWith(prefix)) continue;
        const n = term.slice(prefix.length);
        if (/^[0-9]+$/.test(n)) this.#merge(term, `${place}=${n}`);
      }
    }
  }

  /**
   * What the facility's own texts taught: every device whose name holds
   * `from` holds `to` too, found in its name.
   */
  #merge(from: string, to: string): void {
    const a = this.#postings.get(from);
    if (a === undefined) return;
    const b = this.#postings.get(to) ?? new Postings();
    const merged = new Postings();
    merged.buf = new Uint32Array(a.n + b.n + 1);
    let i = 0, j = 0;
    while (i < a.n || j < b.n) {
      const x = i < a.n ? (a.buf[i] ?? 0) >>> FIELD_BITS : Infinity;
      const y = j < b.n ? (b.buf[j] ?? 0) >>> FIELD_BITS : Infinity;
      const named = i < a.n && ((a.buf[i] ?? 0) & Field.NAME) !== 0;
      if (x < y) {
        if (named) merged.push((x << FIELD_BITS | Field.NAME) >>> 0);
        i++;
      } else if (y < x) {
        merged.push(b.buf[j] ?? 0);
        j++;
      } else {
        merged.push(((b.buf[j] ?? 0) | (named ? Field.NAME : 0)) >>> 0);
        i++;
        j++;
      }
    }
    merged.last = Math.max(a.last, b.last);
    this.#postings.set(to, merged);
  }
}
