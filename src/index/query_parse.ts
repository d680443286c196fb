/**
 * Reading an operator's words: each becomes a clause of alternative terms
 * (the concept, related concepts, a corrected spelling, a range of numbers,
 * an exact name segment), the way the {@link Lexicon} made the index's terms.
 *
 * @module
 */
import type { DeviceIndex } from "./device_index.ts";
import { SEGMENT } from "./data.ts";
import { numberTerm, words } from "./lexicon.ts";
import { editDistance, typoBudget } from "./distance.ts";

/** One term a clause accepts, and how strongly. */
export interface Alternative {
  id: number;
  weight: number;
  /** How the query word became this term, for reasons ("≈steerer", "→ip"). */
  note: string;
}

/** One word (or phrase) of the query: a device must hold one of its terms. */
export interface Clause {
  label: string;
  alts: Alternative[];
}

/** Numbers a range ("bpm 3-6", "cells 2 to 4") may spell out. */
const MAX_RANGE = 100;

/** Clauses of one query at most (a device's count of matched clauses is one byte). */
export const MAX_CLAUSES = 32;

const vocabulary = new WeakMap<DeviceIndex, { word: string; df: number }[]>();

type Item = { word: string } | { range: [number, number] } | { segment: string };

/** The clauses of a query: each a set of alternative terms, one of which a device must hold. */
export function parseQuery(index: DeviceIndex, text: string, lenient: boolean): Clause[] {
  const lex = index.lexicon;
  const items: Item[] = [];
  const tokens =
    text.slice(0, 2000).toLowerCase().match(/[0-9]+\s*(?:-|–|to|\.\.)\s*[0-9]+|[a-z0-9]+/g) ?? [];
  for (const tok of tokens) {
    const range = /^([0-9]+)\s*(?:-|–|to|\.\.)\s*([0-9]+)$/.exec(tok);
    if (range) {
      items.push({ range: [Number(range[1]), Number(range[2])] });
    } else if (
      /[a-z]/.test(tok) && /[0-9]/.test(tok) && index.termId(SEGMENT + tok.toUpperCase())
    ) {
      items.push({ segment: tok });
    } else {
      for (const w of words(tok)) items.push({ word: w });
    }
  }
  const clauses: Clause[] = [];
  const seen = new Set<string>();
  const add = (label: string, alts: Alternative[]) => {
    if (clauses.length >= MAX_CLAUSES) return;
    const key = alts.map((a) => a.id).sort().join(",") || `?${label}`;
    if (seen.has(key)) return;
    seen.add(key);
    clauses.push({ label, alts });
  };
  let buffer: { word: string; note: string }[] = [];
  const flush = () => {
    const fixed = buffer;
    buffer = [];
    const notes = new Map(fixed.map((f) => [f.word, f.note]));
    for (const t of lex.analyseWords(fixed.map((f) => f.word))) {
      const note = notes.get(t.surface) ?? "";
      const label = note ? `${note}≈${t.surface}` : t.surface;
      const alts: Alternative[] = [];
      const id = index.termId(t.term);
      if (id !== undefined) alts.push({ id, weight: 1, note: "" });
      for (const r of [...lex.related(t.surface), ...lex.related(lex.singular(t.surface))]) {
        const rid = index.termId(r);
        if (rid !== undefined && rid !== id) alts.push({ id: rid, weight: 0.6, note: `→${r}` });
      }
      add(label, alts);
    }
  };
  for (const item of items) {
    if ("word" in item) {
      buffer.push(correct(index, item.word, lenient));
      continue;
    }
    if ("segment" in item) {
      flush();
      const id = index.termId(SEGMENT + item.segment.toUpperCase());
      if (id !== undefined) add(item.segment, [{ id, weight: 1, note: "" }]);
      continue;
    }
    const [a, b] = item.range[0] <= item.range[1] ? item.range : [item.range[1], item.range[0]];
    const last = buffer[buffer.length - 1];
    const place = last ? lex.place(lex.singular(last.word)) : undefined;
    if (place !== undefined) buffer.pop();
    flush();
    const alts: Alternative[] = [];
    for (let k = a; k <= Math.min(b, a + MAX_RANGE); k++) {
      const id = index.termId(place ? `${place}=${k}` : numberTerm(String(k)));
      if (id !== undefined) alts.push({ id, weight: 1, note: "" });
    }
    add(`${place ? `${last?.word} ` : ""}${a}-${b}`, alts);
  }
  flush();
  return clauses;
}

/** A query word as the index knows it: itself, its singular, or the nearest known word. */
function correct(
  index: DeviceIndex,
  word: string,
  lenient: boolean,
): { word: string; note: string } {
  const lex = index.lexicon;
  const plain = { word, note: "" };
  if (/^[0-9]/.test(word) || lex.isStopword(word)) return plain;
  if (lex.knownWords.has(word) || index.termId(word) !== undefined) return plain;
  const single = lex.singular(word);
  if (single !== word) return { word: single, note: "" };
  for (const end of ["es", "s"]) {
    const stem = word.slice(0, -end.length);
    if (word.endsWith(end) && stem.length > 2 && index.termId(stem) !== undefined) {
      return { word: stem, note: "" };
    }
  }
  const budget = typoBudget(word.length) + (lenient && word.length >= 3 ? 1 : 0);
  if (budget === 0) return plain;
  let found: { word: string; d: number; df: number } | undefined;
  for (const v of vocabularyOf(index)) {
    if (Math.abs(v.word.length - word.length) > budget) continue;
    const d = editDistance(word, v.word, budget);
    if (d > budget) continue;
    if (!found || d < found.d || d === found.d && v.df > found.df) {
      found = { word: v.word, d, df: v.df };
    }
  }
  return found ? { word: found.word, note: word } : plain;
}

/** Every word the lexicon or the index knows, with how many devices hold it. */
function vocabularyOf(index: DeviceIndex): { word: string; df: number }[] {
  let v = vocabulary.get(index);
  if (v !== undefined) return v;
  const all = new Map<string, number>();
  for (const w of index.lexicon.knownWords) {
    if (/^[a-z]{3,}$/.test(w)) {
      const place = index.lexicon.place(w) !== undefined;
      all.set(w, place ? 1 : index.frequency(index.lexicon.concept(w) ?? w));
    }
  }
  for (const t of index.data.terms) if (/^[a-z]{3,}$/.test(t)) all.set(t, index.frequency(t));
  v = [...all].map(([word, df]) => ({ word, df })).filter((x) => x.df > 0);
  vocabulary.set(index, v);
  return v;
}
