/**
 * The words of a question before they are read as terms: tokens (words,
 * numbers, letters with their number, ordinals), the selection they make
 * ("the second", "the last three", "second to last", "first 5"), and numbers
 * grouped after the word they follow, with lists and ranges as people write
 * them ("1, 2 and 5", "10-12", "10 through 12", "between 3 and 6", "H3-H5").
 *
 * @module
 */
import type { DeviceIndex } from "./device_index.ts";

/** "The second", "the last three": which of the devices found, in name order. */
export interface Selection {
  from: "start" | "end";
  /** 1-based position of the first device taken, counted from `from`. */
  at: number;
  count: number;
  label: string;
}

/** Numbers a range ("bpm 3-6", "cells 2 to 4") may spell out. */
const MAX_RANGE = 100;

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
};
const COUNTS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
};
const LIST = new Set([",", "&", "/", "and", "or", "plus"]);
const RANGE = new Set(["-", "–", "to", "through", "thru", "till", "until", ".."]);

export type Token =
  | { t: "w"; w: string }
  | { t: "n"; v: number; raw: string }
  | { t: "a"; letters: string; v: number; rest: string; raw: string }
  | { t: "o"; v: number }
  | { t: "p"; p: string };

/** Items after numbers are grouped: a word, or the numbers after it. */
export type Item =
  | { kind: "word"; w: string; joined?: boolean }
  | { kind: "nums"; values: number[]; label: string };

export function tokenize(text: string): Token[] {
  const raw = text.slice(0, 2000).toLowerCase().match(
    /[0-9]+(?:st|nd|rd|th)\b|[a-z]+[0-9]+[a-z0-9]*|[0-9]+|[a-z]+(?:-to-[a-z]+(?:-[a-z]+)*)?|\.\.|[,&/–-]/g,
  ) ?? [];
  return raw.map((x): Token => {
    const ord = /^([0-9]+)(?:st|nd|rd|th)$/.exec(x);
    if (ord) return { t: "o", v: Number(ord[1]) };
    if (/^[0-9]+$/.test(x)) return { t: "n", v: Number.parseInt(x, 10), raw: x };
    const alnum = /^([a-z]+)([0-9]+)([a-z0-9]*)$/.exec(x);
    if (alnum) {
      return {
        t: "a",
        letters: alnum[1] ?? "",
        v: Number.parseInt(alnum[2] ?? "0", 10),
        rest: alnum[3] ?? "",
        raw: x,
      };
    }
    if (/^[a-z]/.test(x)) return { t: "w", w: x };
    return { t: "p", p: x };
  });
}

/** Takes "the second", "the last three", "first 5", "second to last" out of the tokens. */
export function takeSelection(
  index: DeviceIndex,
  tokens: Token[],
): { rest: Token[]; selection?: Selection } {
  const lex = index.lexicon;
  const word = (i: number) => {
    const k = tokens[i];
    return k?.t === "w" ? k.w : undefined;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const w = word(i);
    let at: number | undefined;
    let from: "start" | "end" = "start";
    let used = 1;
    if (tok?.t === "o") at = tok.v;
    else if (w !== undefined && ORDINALS[w] !== undefined) at = ORDINALS[w];
    else if (w === "last" || w === "final" || w === "penultimate") {
      from = "end";
      at = w === "penultimate" ? 2 : 1;
    } else if (w === "top" || w === "bottom") {
      from = w === "top" ? "start" : "end";
      at = 1;
    }
    if (at === undefined) continue;
    // "first fault" is a thing, not a selection.
    const ahead = tokens.slice(i, i + 4).map((k) => k.t === "w" ? k.w : "");
    if (lex.phraseAt(ahead, 0)) continue;
    let label = tok?.t === "o" ? `${tok.v}th` : w ?? "";
    // "second to last", "second last": counted from the end.
    if (from === "start" && (word(i + 1) === "last" || word(i + 2) === "last")) {
      used = word(i + 1) === "last" ? 2 : 3;
      from = "end";
      label += " last";
    }
    let count = 1;
    const next = tokens[i + used];
    const n = next?.t === "n" ? next.v : next?.t === "w" ? COUNTS[next.w] : undefined;
    const isCount = (label === "first" || label === "last" || label === "top" ||
      label === "bottom" || label === "final") && n !== undefined && n > 0;
    if (isCount && n !== undefined) {
      count = Math.min(n, 1000);
      used++;
      label += ` ${n}`;
    } else if (label === "top" || label === "bottom") continue;
    const rest = [...tokens.slice(0, i), ...tokens.slice(i + used)];
    return { rest, selection: { from, at, count, label } };
  }
  return { rest: tokens };
}

/** Numbers grouped after the word they follow: lists and ranges as people write them. */
export function group(tokens: Token[]): Item[] {
  const items: Item[] = [];
  let i = 0;
  const valueAt = (j: number, letters: string | undefined): number | undefined => {
    const k = tokens[j];
    if (k?.t === "n" && letters === undefined) return k.v;
    if (k?.t === "a" && k.letters === letters && k.rest === "") return k.v;
    if (k?.t === "n" && letters !== undefined) return k.v;
    return undefined;
  };
  const sep = (j: number): string | undefined => {
    const k = tokens[j];
    return k?.t === "p" ? k.p : k?.t === "w" ? k.w : undefined;
  };
  while (i < tokens.length) {
    const tok = tokens[i] as Token;
    if (tok.t === "w") {
      // "between 3 and 6", "from 3 to 6".
      const a = valueAt(i + 1, undefined), b = valueAt(i + 3, undefined);
      if (
        (tok.w === "between" && sep(i + 2) === "and" || tok.w === "from" && sep(i + 2) === "to") &&
        a !== undefined && b !== undefined
      ) {
        items.push(nums(range(a, b), `${a}-${b}`));
        i += 4;
        continue;
      }
      items.push({ kind: "word", w: tok.w });
      i++;
      continue;
    }
    if (tok.t === "p" || tok.t === "o") {
      i++;
      continue;
    }
    const letters = tok.t === "a" ? tok.letters : undefined;
    if (letters !== undefined) items.push({ kind: "word", w: letters, joined: true });
    const values = [tok.v];
    const label = [String(tok.v)];
    i++;
    for (;;) {
      const s = sep(i);
      const v = valueAt(i + 1, letters);
      if (s === undefined || v === undefined) break;
      if (RANGE.has(s)) {
        const last = values[values.length - 1] ?? v;
        values.push(...range(last, v).filter((x) => x !== last));
        label.push(`-${v}`);
      } else if (LIST.has(s)) {
        values.push(v);
        label.push(`,${v}`);
      } else break;
      i += 2;
    }
    items.push(nums(values, label.join("")));
    if (tok.t === "a" && tok.rest !== "" && !/^[0-9]/.test(tok.rest)) {
      items.push({ kind: "word", w: tok.rest });
    }
  }
  return items;
}

function range(a: number, b: number): number[] {
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  const out: number[] = [];
  for (let k = lo; k <= Math.min(hi, lo + MAX_RANGE); k++) out.push(k);
  return out;
}

function nums(values: number[], label: string): Item {
  return { kind: "nums", values: [...new Set(values)], label };
}
