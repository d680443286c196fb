/**
 * Reading an operator's question: its framing ("what are", "show me") is
 * dropped, an ordinal or a selection ("the second", "the last three") is
 * taken apart, intent words ("actual", "requested", "what can I adjust") say
 * what is wanted of the devices, numbers are bound to the word they follow
 * ("EVR 3", "cells 19 and 20", "H3-H5", "10 through 12"), and every other
 * word becomes a clause of alternative terms, the way the {@link Lexicon}
 * made the index's terms. Everyday words the facility does not use are set
 * aside and named; only words that are not words are corrected.
 *
 * @module
 */
import type { DeviceIndex } from "./device_index.ts";
import { singulars } from "./lexicon.ts";
import { editDistance, typoBudget } from "./distance.ts";
import { isEnglishWord } from "./english.ts";
import { group, type Item, takeSelection, tokenize } from "./question_words.ts";

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
  /** A word or phrase, a number, a place ("cell 4"), a number bound to a word ("EVR 3"). */
  kind: "word" | "number" | "place" | "bound";
  alts: Alternative[];
  /**
   * For a number bound to a word ("cavity 3"): the looser reading (the word
   * and the number anywhere in the device) tried when the bound one finds nothing.
   */
  loose?: Clause;
}

/** What the operator wants of the devices found, beside which devices they are. */
export type { Selection } from "./question_words.ts";
import type { Selection } from "./question_words.ts";

export type Intent = "setpoint" | "readback" | "adjustable";

/** A question as understood. */
export interface ParsedQuery {
  clauses: Clause[];
  intents: Intent[];
  selection?: Selection;
  /** Everyday words no device of this facility is described by, set aside. */
  ignored: string[];
}

/** Clauses of one query at most (a device's count of matched clauses is one byte). */
export const MAX_CLAUSES = 32;

const vocabulary = new WeakMap<DeviceIndex, { word: string; df: number }[]>();

/** The clauses, intents and selection of a question. */
export function parseQuery(index: DeviceIndex, text: string, lenient: boolean): ParsedQuery {
  const lex = index.lexicon;
  const { rest, selection } = takeSelection(index, tokenize(text));
  const items = group(rest);
  // Intent phrases first: "what can I adjust", "actual", "requested".
  const intents: Intent[] = [];
  const kept: Item[] = [];
  for (let i = 0; i < items.length; i++) {
    const ws: string[] = [];
    for (let j = i; j < items.length && j < i + 4; j++) {
      const it = items[j];
      if (it?.kind !== "word") break;
      ws.push(it.w);
    }
    const found = ws.length ? lex.intentAt(ws, 0) : undefined;
    if (found) {
      const intent = found.intent as Intent;
      if (!intents.includes(intent)) intents.push(intent);
      i += found.n - 1;
      continue;
    }
    kept.push(items[i] as Item);
  }

  const clauses: Clause[] = [];
  const ignored: string[] = [];
  const seen = new Set<string>();
  const add = (c: Clause) => {
    if (clauses.length >= MAX_CLAUSES) return;
    const key = c.alts.map((a) => a.id).sort().join(",") || `?${c.label}`;
    if (seen.has(key)) return;
    seen.add(key);
    clauses.push(c);
  };
  const alternatives = (concepts: readonly string[], surface: string): Alternative[] => {
    const alts: Alternative[] = [];
    for (const c of concepts) {
      const id = index.termId(c);
      if (id !== undefined) alts.push({ id, weight: 1, note: "" });
    }
    for (const r of [...lex.related(surface), ...lex.related(lex.singular(surface))]) {
      const rid = index.termId(r);
      if (rid !== undefined && !alts.some((a) => a.id === rid)) {
        alts.push({ id: rid, weight: 0.6, note: `→${r}` });
      }
    }
    return alts;
  };
  const numberAlts = (values: number[], prefix: string): Alternative[] => {
    const alts: Alternative[] = [];
    for (const v of values) {
      const id = index.termId(`${prefix}${v}`);
      if (id !== undefined && !alts.some((a) => a.id === id)) {
        alts.push({ id, weight: 1, note: "" });
      }
    }
    return alts;
  };

  // What the number after a word is bound to: its concepts, a place, or nothing (set aside).
  let before:
    | { concepts: string[]; label: string; joined?: boolean }
    | { place: string; label: string }
    | "ignored"
    | undefined;
  let i = 0;
  while (i < kept.length) {
    const item = kept[i] as Item;
    if (item.kind === "nums") {
      if (before === "ignored") {
        ignored.push(item.label);
      } else if (before !== undefined && !("concepts" in before)) {
        add({
          label: `${before.label} ${item.label}`,
          kind: "place",
          alts: numberAlts(item.values, `${before.place}=`),
        });
      } else if (before !== undefined && before.concepts.length > 0) {
        const alts = before.concepts.flatMap((c) => numberAlts(item.values, `${c}#`));
        const label = `${before.label}${before.joined ? "" : " "}${item.label}`;
        // "QH9" names one thing; "cavity 3" may number the cavity or its station.
        const loose: Clause | undefined = before.joined
          ? undefined
          : { label: item.label, kind: "number", alts: numberAlts(item.values, "#") };
        add({ label, kind: "bound", alts, ...(loose ? { loose } : {}) });
      } else {
        add({ label: item.label, kind: "number", alts: numberAlts(item.values, "#") });
      }
      before = undefined;
      i++;
      continue;
    }
    if (item.joined) {
      // Letters typed with their number ("QH1", "C05", "A3"): a part of a name, never a
      // stopword or an everyday word.
      const w = item.w;
      const concepts = lex.conceptsOf(w).length ? [...lex.conceptsOf(w)] : [w];
      concepts.forEach((c, k) =>
        add({ label: k === 0 ? w : `${w}→${c}`, kind: "word", alts: alternatives([c], w) })
      );
      before = { concepts, label: w, joined: true };
      i++;
      continue;
    }
    // The words up to the next numbers, corrected, then read as phrases.
    const run: { w: string; note: string; everyday: boolean }[] = [];
    while (
      i < kept.length && kept[i]?.kind === "word" && !(kept[i] as { joined?: boolean }).joined
    ) {
      const w = (kept[i] as { w: string }).w;
      run.push(correct(index, w, lenient));
      i++;
    }
    // A compound the facility never writes ("linac-to-booster") is read as its words.
    for (let k = run.length - 1; k >= 0; k--) {
      const r = run[k] as { w: string };
      if (r.w.includes("-to-") && index.termId(r.w) === undefined) {
        run.splice(k, 1, ...r.w.split("-").map((x) => ({ w: x, note: "", everyday: false })));
      }
    }
    const ws = run.map((r) => r.w);
    let j = 0;
    before = undefined;
    while (j < ws.length) {
      const w = ws[j] ?? "";
      const place = lex.place(w);
      if (place !== undefined && j === ws.length - 1 && kept[i]?.kind === "nums") {
        before = { place, label: w };
        j++;
        continue;
      }
      const compound = compoundAt(index, ws, j);
      if (compound) {
        const id = index.termId(compound.term);
        add({
          label: compound.label,
          kind: "word",
          alts: id === undefined ? [] : [{ id, weight: 1, note: "" }],
        });
        before = { concepts: [compound.term], label: compound.label };
        j += compound.n;
        continue;
      }
      const phrase = lex.phraseAt(ws, j);
      if (phrase) {
        const surface = ws.slice(j, j + phrase.n).join(" ");
        phrase.concepts.forEach((c, k) =>
          add({
            label: k === 0 ? surface : `${surface}→${c}`,
            kind: "word",
            alts: alternatives([c], surface),
          })
        );
        before = { concepts: phrase.concepts, label: surface };
        j += phrase.n;
        continue;
      }
      const r = run[j] as { w: string; note: string; everyday: boolean };
      j++;
      if (lex.isStopword(w)) continue;
      const label = r.note ? `${r.note}≈${w}` : w;
      const single = lex.singular(w);
      const concepts = lex.conceptsOf(single).length ? [...lex.conceptsOf(single)] : [];
      if (concepts.length === 0) {
        const id = index.termId(w) ??
          singulars(w).map((s) => index.termId(s)).find((x) => x !== undefined);
        if (id !== undefined) {
          const term = index.term(id) ?? w;
          add({ label, kind: "word", alts: [{ id, weight: 1, note: "" }, ...alternatives([], w)] });
          before = { concepts: [term], label };
          continue;
        }
        if ((r.everyday || !r.note && isEnglishWord(w)) && lex.related(w).length === 0) {
          // An everyday word no device of this facility is described by: set aside, and said.
          ignored.push(w);
          before = "ignored";
          continue;
        }
        // Not a word, and nothing like it: a name nothing holds.
        add({ label, kind: "word", alts: alternatives([], w) });
        before = { concepts: [w], label };
        continue;
      }
      concepts.forEach((c, k) =>
        add({ label: k === 0 ? label : `${label}→${c}`, kind: "word", alts: alternatives([c], w) })
      );
      before = { concepts, label };
    }
  }
  return { clauses, intents, ...(selection ? { selection } : {}), ignored };
}

/** "booster-to-storage-ring" or "booster to storage ring" as the index's compound, when it has it. */
function compoundAt(
  index: DeviceIndex,
  ws: readonly string[],
  j: number,
): { term: string; n: number; label: string } | undefined {
  const w = ws[j] ?? "";
  if (w.includes("-to-") && index.termId(w) !== undefined) return { term: w, n: 1, label: w };
  if (ws[j + 1] !== "to" || ws[j + 2] === undefined) return undefined;
  for (let n = Math.min(6, ws.length - j); n >= 3; n--) {
    const term = ws.slice(j, j + n).join("-");
    if (index.termId(term) !== undefined) return { term, n, label: ws.slice(j, j + n).join(" ") };
  }
  return undefined;
}

/**
 * A query word as the index knows it: itself, its singular, or — only when
 * it is not an English word — the nearest known word. `everyday`: an English
 * word the index and the synonym table do not know.
 */
function correct(
  index: DeviceIndex,
  word: string,
  lenient: boolean,
): { w: string; note: string; everyday: boolean } {
  const lex = index.lexicon;
  const plain = { w: word, note: "", everyday: false };
  if (lex.isStopword(word) || lex.knownWords.has(word) || lex.intent(word) !== undefined) {
    return plain;
  }
  if (index.termId(word) !== undefined) return plain;
  const single = lex.singular(word);
  if (single !== word) return { w: single, note: "", everyday: false };
  for (const s of singulars(word)) {
    if (index.termId(s) !== undefined) return { w: s, note: "", everyday: false };
  }
  if (word.includes("-to-")) return plain;
  if (isEnglishWord(word)) return { ...plain, everyday: true };
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
  return found ? { w: found.word, note: word, everyday: false } : plain;
}

/** Every word the lexicon or the index knows, with how many devices hold it. */
function vocabularyOf(index: DeviceIndex): { word: string; df: number }[] {
  let v = vocabulary.get(index);
  if (v !== undefined) return v;
  const all = new Map<string, number>();
  for (const w of index.lexicon.knownWords) {
    if (/^[a-z]{3,}$/.test(w)) {
      const lex = index.lexicon;
      const place = lex.place(w) !== undefined;
      const related = lex.related(w).reduce((m, r) => Math.max(m, index.frequency(r)), 0);
      all.set(w, place ? 1 : Math.max(index.frequency(lex.concept(w) ?? w), related));
    }
  }
  for (const t of index.wordTerms()) all.set(t, index.frequency(t));
  v = [...all].map(([word, df]) => ({ word, df })).filter((x) => x.df > 0);
  vocabulary.set(index, v);
  return v;
}
