/**
 * Wrapping text to a terminal's width at spaces, never inside a word unless
 * the word alone is wider than the line. Colour escapes (SGR) take no width
 * and are closed at each line's end and opened again on the next, so a
 * style never leaks into a table's border. Only the ASCII space breaks a
 * line: a no-break space (U+00A0) holds what it joins together.
 *
 * @example
 * ```ts
 * import { wrapText } from "./text_wrap.ts";
 * wrapText("the quick brown fox", 10); // ["the quick", "brown fox"]
 * ```
 *
 * @module
 */

// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;
// deno-lint-ignore no-control-regex
const SGR_AT = /^\x1b\[[0-9;]*m/;
/** The escapes that close one style (bold or dim, italic, underline, inverse, strike, colours). */
// deno-lint-ignore no-control-regex
const CLOSE = /^\x1b\[(22|23|24|27|29|39|49)m$/;

/** Whether a code point takes two columns (East Asian wide and full-width, emoji). */
function isWide(cp: number): boolean {
  return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd);
}

/** Columns a text takes on a terminal (colour escapes take none). */
export function visibleWidth(text: string): number {
  let n = 0;
  for (const ch of text.replace(SGR, "")) n += isWide(ch.codePointAt(0) ?? 0) ? 2 : 1;
  return n;
}

/** The widest word of a text (what a column must hold for no word to be split). */
export function widestWord(text: string): number {
  return Math.max(0, ...text.split(/[ \n]+/).map(visibleWidth));
}

/** The widest line of a text. */
export function widestLine(text: string): number {
  return Math.max(0, ...text.split("\n").map(visibleWidth));
}

/** Splits a word wider than `width` into pieces of at most `width` columns, escapes kept. */
function breakWord(word: string, width: number): string[] {
  const pieces: string[] = [];
  let piece = "";
  let used = 0;
  for (let i = 0; i < word.length;) {
    const esc = SGR_AT.exec(word.slice(i));
    if (esc) {
      piece += esc[0];
      i += esc[0].length;
      continue;
    }
    const ch = String.fromCodePoint(word.codePointAt(i) ?? 0);
    const w = isWide(ch.codePointAt(0) ?? 0) ? 2 : 1;
    if (used + w > width && used > 0) {
      pieces.push(piece);
      piece = "";
      used = 0;
    }
    piece += ch;
    used += w;
    i += ch.length;
  }
  if (piece) pieces.push(piece);
  return pieces;
}

/** The SGR escapes still open at the end of `text` (a reset closes all). */
function openStyles(text: string, open: string[]): string[] {
  let now = open;
  for (const m of text.matchAll(SGR)) {
    const code = m[0];
    if (code === "\x1b[0m" || code === "\x1b[m") now = [];
    else if (CLOSE.test(code)) now = now.slice(0, -1);
    else now = [...now, code];
  }
  return now;
}

/**
 * The lines of `text` wrapped to `width` columns: its own line breaks kept,
 * breaks at spaces, a word wider than a line split across lines.
 */
export function wrapText(text: string, width: number): string[] {
  const w = Math.max(1, Math.floor(width));
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    const words = paragraph.split(" ");
    let line = "";
    let used = 0;
    const flush = () => {
      lines.push(line);
      line = "";
      used = 0;
    };
    for (const word of words) {
      const ww = visibleWidth(word);
      if (used > 0 && used + 1 + ww <= w) {
        line += ` ${word}`;
        used += 1 + ww;
        continue;
      }
      if (used > 0) flush();
      if (ww <= w) {
        line = word;
        used = ww;
        continue;
      }
      const pieces = breakWord(word, w);
      for (const piece of pieces.slice(0, -1)) lines.push(piece);
      line = pieces.at(-1) ?? "";
      used = visibleWidth(line);
    }
    lines.push(line);
  }
  return carryStyles(lines);
}

/** Closes the styles open at each line's end and opens them again on the next line. */
function carryStyles(lines: string[]): string[] {
  let open: string[] = [];
  return lines.map((line) => {
    const start = open.join("");
    open = openStyles(line, open);
    return `${start}${line}${open.length ? "\x1b[0m" : ""}`;
  });
}

/**
 * A label and its text as help lists them: the text wrapped beside the
 * label, at `indent` columns; a label too wide for that gets a line of its
 * own and the text starts on the next, at the indent.
 *
 * @example
 * ```ts
 * hanging("  --config FILE", "configuration file", 20, 80);
 * ```
 */
export function hanging(label: string, text: string, indent: number, width: number): string[] {
  const labelWidth = visibleWidth(label);
  if (labelWidth + 1 <= indent && width - indent >= 20) {
    const [first = "", ...rest] = text ? wrapText(text, width - indent) : [];
    const pad = " ".repeat(indent);
    return [
      `${label}${" ".repeat(indent - labelWidth)}${first}`.trimEnd(),
      ...rest.map((l) => `${pad}${l}`),
    ];
  }
  // The label alone on its line(s), the text below it, indented a little. A label wider than the
  // line wraps between its words, its continuation indented past its first word's start.
  const under = Math.min(indent, 6);
  const lines = text ? wrapText(text, Math.max(1, width - under)) : [];
  const lead = " ".repeat(Math.min(/^ */.exec(label)?.[0].length ?? 0, width / 4 | 0));
  const more = `${lead}  `;
  const labels = labelWidth <= width ? [label] : wrapText(label.trimStart(), width - more.length)
    .map((l, i) => `${i === 0 ? lead : more}${l}`);
  return [...labels, ...lines.map((l) => `${" ".repeat(under)}${l}`)];
}
