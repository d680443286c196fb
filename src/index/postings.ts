/**
 * The builder's working pieces: growing postings lists, texts with their
 * numbers masked (so a facility's repeating texts are analysed once per
 * template), and the merge that gives a name's word what it was learned to mean.
 *
 * @module
 */
import { Field, FIELD_BITS, Kind } from "./data.ts";
import { NUMBER_MARK } from "./lexicon.ts";

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

/**
 * One analysed term of a template: fixed (its postings resolved once), or
 * holding the template's numbers (its postings per number, resolved once each).
 */
export type TemplateTerm =
  | { fixed: string; postings?: Postings }
  | { parts: string[]; marks: number[]; byNumber: Map<string, Postings> };

export const NONE: string[] = [];

/** A property value as the builder keeps it: its raw term, its analysed terms (when it holds no digits). */
export interface Value {
  raw: Postings;
  terms?: TemplateTerm[];
}

/** A text with its numbers masked (`\uE000k ` for the k-th), and those numbers. */
export function masked(text: string): { key: string; numbers: string[] } {
  let key = "";
  let numbers = NONE;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) continue;
    let j = i + 1;
    while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
    if (numbers === NONE) numbers = [];
    key += `${text.slice(from, i)}${NUMBER_MARK}${numbers.length} `;
    let k = i;
    while (k < j - 1 && text.charCodeAt(k) === 48) k++;
    numbers.push(text.slice(k, j));
    from = j;
    i = j - 1;
  }
  return numbers === NONE ? { key: text, numbers } : { key: key + text.slice(from), numbers };
}

/**
 * What the facility's own texts taught: every device whose name holds
 * `from` holds `to` too, found in its name.
 */
export function mergeNamed(postings: Map<string, Postings>, from: string, to: string): void {
  const a = postings.get(from);
  if (a === undefined) return;
  const b = postings.get(to) ?? new Postings();
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
  postings.set(to, merged);
}

/**
 * Each device's signal kind into bits 1–2 of its writability byte: a
 * setpoint, else a readback, else a state, else something else.
 */
export function markKinds(
  postings: Map<string, Postings>,
  flags: Uint8Array,
  rank: Uint32Array | undefined,
): void {
  const kinds = new Uint8Array(flags.length).fill(Kind.OTHER);
  for (
    const [term, kind] of [["status", Kind.STATE], ["rdbk", Kind.READBACK], [
      "setpt",
      Kind.SETPOINT,
    ]] as const
  ) {
    const p = postings.get(term);
    if (p === undefined) continue;
    for (let i = 0; i < p.n; i++) {
      const doc = (p.buf[i] ?? 0) >>> FIELD_BITS;
      kinds[rank ? rank[doc] ?? 0 : doc] = kind;
    }
  }
  for (let d = 0; d < flags.length; d++) flags[d] = ((flags[d] ?? 0) & 1) | (kinds[d] ?? 0) << 1;
}

/**
 * A name word whose number is always the device's place ("c" of `C03` and
 * cell 3): every `c#N` of a name is that place, found in the name.
 */
export function applyPlaces(postings: Map<string, Postings>, places: Record<string, string>): void {
  for (const [word, place] of Object.entries(places)) {
    const prefix = `${word}#`;
    for (const term of [...postings.keys()]) {
      if (!term.startsWith(prefix)) continue;
      const n = term.slice(prefix.length);
      if (/^[0-9]+$/.test(n)) mergeNamed(postings, term, `${place}=${n}`);
    }
  }
}

/**
 * The postings of every term, in term order, packed into one array with each
 * term's start (the last start is the total); devices renumbered by `rank`
 * when the names were not added in order. Empties `map` as it goes.
 */
export function packPostings(
  map: Map<string, Postings>,
  rank: Uint32Array | undefined,
): { terms: string[]; starts: Uint32Array; postings: Uint32Array } {
  const terms = [...map.keys()].sort();
  const starts = new Uint32Array(terms.length + 1);
  let total = 0;
  terms.forEach((t, i) => {
    starts[i] = total;
    total += map.get(t)?.n ?? 0;
  });
  starts[terms.length] = total;
  const postings = new Uint32Array(total);
  const mask = (1 << FIELD_BITS) - 1;
  terms.forEach((t, i) => {
    const p = map.get(t);
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
    map.delete(t);
  });
  return { terms, starts, postings };
}
