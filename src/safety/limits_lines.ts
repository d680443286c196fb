/**
 * Where each key of a TOML text is, for messages that name lines: the TOML
 * parser gives values, not positions. Keys are found in every form TOML
 * allows (bare, "basic" with escapes, 'literal'; in `[table."headers"]`,
 * dotted `a."b".c = …` and `{ inline = … }` tables); strings, comments and
 * multi-line strings are skipped so a name inside a value is not a key.
 *
 * @module
 */

const BARE = /[A-Za-z0-9_-]/;
const SIMPLE_ESCAPES: Record<string, string> = {
  b: "\b",
  t: "\t",
  n: "\n",
  f: "\f",
  r: "\r",
  e: "\x1b",
  '"': '"',
  "\\": "\\",
};

/** The first line (1-based) on which each key appears as a key. */
export function keyLines(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const n = text.length;
  let i = 0;
  let line = 1;
  let arrays = 0;
  let header = false;
  let lineStart = true;
  const isKey = (j: number) => {
    while (text[j] === " " || text[j] === "\t") j++;
    const c = text[j];
    return c === "=" || c === "." || (header && c === "]");
  };
  const record = (key: string) => {
    if (!out.has(key)) out.set(key, line);
  };
  while (i < n) {
    const c = text[i] as string;
    if (c === "\n") {
      line++;
      i++;
      lineStart = true;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    const atStart = lineStart;
    lineStart = false;
    if (c === "#") {
      while (i < n && text[i] !== "\n") i++;
    } else if (c === "[") {
      if (atStart && arrays === 0) header = true;
      else arrays++;
      i++;
    } else if (c === "]") {
      if (header) header = false;
      else arrays = Math.max(0, arrays - 1);
      i++;
      while (text[i] === "]") i++;
    } else if (c === '"' || c === "'") {
      const triple = c.repeat(3);
      if (text.startsWith(triple, i)) {
        const end = text.indexOf(triple, i + 3);
        const stop = end < 0 ? n : end + 3;
        line += text.slice(i, stop).split("\n").length - 1;
        i = stop;
        while (text[i] === c) i++;
        continue;
      }
      const [value, next] = c === "'" ? literal(text, i + 1) : basic(text, i + 1);
      if (isKey(next)) record(value);
      i = next;
    } else if (BARE.test(c)) {
      let j = i;
      while (j < n && BARE.test(text[j] as string)) j++;
      if (isKey(j)) record(text.slice(i, j));
      i = j;
    } else {
      i++;
    }
  }
  return out;
}

/** A 'literal' string from `start` (after the quote): its value and the index after it. */
function literal(text: string, start: number): [string, number] {
  let j = start;
  while (j < text.length && text[j] !== "'" && text[j] !== "\n") j++;
  return [text.slice(start, j), text[j] === "'" ? j + 1 : j];
}

/** A "basic" string from `start`, escapes decoded: its value and the index after it. */
function basic(text: string, start: number): [string, number] {
  let j = start;
  let value = "";
  while (j < text.length && text[j] !== '"' && text[j] !== "\n") {
    if (text[j] !== "\\") {
      value += text[j++];
      continue;
    }
    const e = text[j + 1] ?? "";
    const hex = e === "u" ? 4 : e === "U" ? 8 : e === "x" ? 2 : 0;
    if (hex > 0) {
      const code = parseInt(text.slice(j + 2, j + 2 + hex), 16);
      value += Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : "";
      j += 2 + hex;
    } else {
      value += SIMPLE_ESCAPES[e] ?? e;
      j += 2;
    }
  }
  return [value, text[j] === '"' ? j + 1 : j];
}
