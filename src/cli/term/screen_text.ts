/**
 * Text drawn on the approval screen with a width the program knows, so no
 * line it prints is ever wrapped by the terminal. A line the terminal wraps
 * starts its continuation at column 1 with whatever text came next: a long
 * plan description could then begin a line like a table row. So the
 * screen's lines are cut by the program, at the terminal's width, and every
 * continuation is marked.
 *
 * {@link screenText} shows text from outside (after {@link untrusted}) with
 * only characters whose terminal width is certain: ASCII, Latin, Greek and
 * Cyrillic letters, punctuation, arrows, mathematical operators and box
 * drawing (one column each), and the East Asian wide ideographs, kana and
 * Hangul (two). Every other character — emoji and their joiners and
 * selectors, combining marks, other scripts (including right-to-left ones,
 * which some terminals reorder), private-use and unassigned code points — is
 * shown as a `\u{hhhh}` escape, so what the table library measures
 * (`string-width`) is what the terminal draws. In a table cell the table's
 * own glyphs (box drawing, block elements) are escaped too, so a cell
 * cannot draw a border. Terminals that draw "ambiguous" characters two
 * columns wide (some East Asian set-ups) draw the table itself wider; that
 * is outside what this module can know.
 *
 * @module
 */
import { escapeCodePoint, untrusted } from "../../util/untrusted_text.ts";

/** Characters a terminal may draw at other widths than a table library measures. */
const UNCERTAIN =
  /[\p{Extended_Pictographic}\p{Mn}\p{Me}\p{Cn}\p{Co}\p{Cs}\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** One column wide, certainly (before {@link UNCERTAIN} is excluded). */
function narrowRange(cp: number): boolean {
  return (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0x2ff) || // Latin-1, Latin Extended-A/B, IPA, modifier letters
    (cp >= 0x370 && cp <= 0x52f) || // Greek, Cyrillic
    (cp >= 0x2010 && cp <= 0x205e) || // dashes, quotes, bullets, …, ‰, primes
    (cp >= 0x2070 && cp <= 0x209c) || // superscripts and subscripts
    (cp >= 0x20a0 && cp <= 0x20c0) || // currency
    (cp >= 0x2100 && cp <= 0x218b) || // letterlike symbols, number forms
    (cp >= 0x2190 && cp <= 0x2328) || // arrows, mathematical operators, technical…
    (cp >= 0x232b && cp <= 0x27ef) || // …but not 〈 〉; box drawing, shapes, symbols, dingbats
    (cp >= 0x2900 && cp <= 0x2bff); // more arrows and mathematical symbols
}

/** Two columns wide: the ranges `string-width` 4 (the table's measure) counts as full width. */
function wideRange(cp: number): boolean {
  return (cp >= 0x1100 && cp <= 0x115f) ||
    cp === 0x2329 || cp === 0x232a ||
    (cp >= 0x2e80 && cp <= 0x3247 && cp !== 0x303f) ||
    (cp >= 0x3250 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0xa4c6) ||
    (cp >= 0xa960 && cp <= 0xa97c) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe10 && cp <= 0xfe19) ||
    (cp >= 0xfe30 && cp <= 0xfe6b) ||
    (cp >= 0xff01 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1b000 && cp <= 0x1b001) ||
    (cp >= 0x1f200 && cp <= 0x1f251) ||
    (cp >= 0x20000 && cp <= 0x3fffd);
}

/** The table's own glyphs: box drawing and block elements. */
function tableGlyph(cp: number): boolean {
  return cp >= 0x2500 && cp <= 0x259f;
}

/**
 * The width `cp` certainly takes in a terminal (1 or 2), or undefined when
 * that is not certain.
 */
export function certainWidth(cp: number): 1 | 2 | undefined {
  if (cp < 0x7f) return cp >= 0x20 ? 1 : undefined;
  const narrow = narrowRange(cp), wide = !narrow && wideRange(cp);
  if (!narrow && !wide) return undefined;
  if (UNCERTAIN.test(String.fromCodePoint(cp))) return undefined;
  return narrow ? 1 : 2;
}

/** Where text from outside is drawn: a table cell also escapes the table's glyphs. */
export interface ScreenTextOptions {
  cell?: boolean;
}

/**
 * One line of text from outside, as the approval screen shows it: through
 * {@link untrusted}, then every character of uncertain width (and, in a
 * cell, every box-drawing glyph) as a visible escape.
 */
export function screenText(text: string, opts: ScreenTextOptions = {}): string {
  const safe = untrusted(text);
  if (PLAIN.test(safe) && !(opts.cell && /[\u2500-\u259f]/.test(safe))) return safe;
  let out = "";
  for (const ch of safe) {
    const cp = ch.codePointAt(0) ?? 0;
    out += certainWidth(cp) === undefined || (opts.cell && tableGlyph(cp))
      ? escapeCodePoint(cp)
      : ch;
  }
  return out;
}

/**
 * `text` with the approval table's own glyphs (box drawing, block elements)
 * shown as escapes: text from outside drawn near the approval screen — the
 * model's words right before it proposes a plan — cannot draw its table.
 */
export function withoutTableGlyphs(text: string): string {
  return /[\u2500-\u259f]/.test(text)
    ? text.replace(/[\u2500-\u259f]/g, (c) => escapeCodePoint(c.codePointAt(0) ?? 0))
    : text;
}

/** A text from outside takes at most this many columns of a table cell or a choice (then "…"). */
export const MAX_CELL_TEXT = 400;

/**
 * {@link screenText} for a table cell or a prompt's choice: the table's
 * glyphs escaped too, and at most {@link MAX_CELL_TEXT} columns (then "…").
 */
export function cellText(text: string): string {
  const shown = screenText(text, { cell: true });
  if (screenWidth(shown) <= MAX_CELL_TEXT) return shown;
  return `${wrapLine(shown, MAX_CELL_TEXT - 1)[0] ?? ""}…`;
}

/** Printable ASCII only: the common case, kept as it is. */
const PLAIN = /^[ -~]*$/;

/** The program's own styling (SGR), which takes no room. */
// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/y;
// deno-lint-ignore no-control-regex
const SGR_ALL = /\x1b\[[0-9;]*m/g;

/** Widths of the non-ASCII code points met so far (2 where uncertain). */
const WIDTHS = new Map<number, number>();

/** The columns `cp` takes at most. */
function widthOf(cp: number): number {
  if (cp >= 0x20 && cp < 0x7f) return 1;
  let w = WIDTHS.get(cp);
  if (w === undefined) {
    w = certainWidth(cp) ?? 2;
    WIDTHS.set(cp, w);
  }
  return w;
}

/**
 * Columns `line` takes in a terminal: SGR escapes count nothing, a
 * character of uncertain width counts 2 (as much as any single code point
 * takes), so the figure is never less than what the terminal draws.
 */
export function screenWidth(line: string): number {
  if (PLAIN.test(line)) return line.length;
  const bare = line.includes("\x1b") ? line.replace(SGR_ALL, "") : line;
  if (PLAIN.test(bare)) return bare.length;
  let width = 0;
  for (const ch of bare) width += widthOf(ch.codePointAt(0) ?? 0);
  return width;
}

/**
 * `line` as tokens: SGR escapes (width 0) and single code points. Token `i`
 * is `line.slice(starts[i], starts[i + 1])`; `starts` ends with the length.
 */
function scan(line: string): { starts: number[]; widths: number[] } {
  const starts: number[] = [], widths: number[] = [];
  for (let i = 0; i < line.length;) {
    starts.push(i);
    if (line.charCodeAt(i) === 0x1b) {
      SGR.lastIndex = i;
      const m = SGR.exec(line);
      if (m) {
        widths.push(0);
        i += m[0].length;
        continue;
      }
    }
    const cp = line.codePointAt(i) ?? 0;
    widths.push(widthOf(cp));
    i += cp > 0xffff ? 2 : 1;
  }
  starts.push(line.length);
  return { starts, widths };
}

/**
 * Cuts `line` into pieces no wider than `width` (at least one character a
 * piece), at the last space of a piece where it has one, else anywhere; the
 * spaces cut at are dropped.
 */
export function wrapLine(line: string, width: number): string[] {
  const room = Math.max(1, width);
  if (screenWidth(line) <= room) return [line];
  const { starts, widths } = scan(line);
  const at = (i: number) => starts[i] ?? line.length;
  const n = widths.length;
  const pieces: string[] = [];
  for (let i = 0; i < n;) {
    let used = 0, end = i;
    while (end < n) {
      const w = widths[end] ?? 0;
      if (used + w > room && end > i) break;
      used += w;
      end++;
    }
    if (end < n) {
      let space = -1;
      for (let j = end; j > i; j--) {
        if (line[at(j)] === " " && at(j + 1) - at(j) === 1) {
          space = j;
          break;
        }
      }
      if (space > i) {
        pieces.push(line.slice(at(i), at(space)));
        i = space + 1;
        continue;
      }
    }
    pieces.push(line.slice(at(i), at(end)));
    i = end;
  }
  return pieces.length ? pieces : [""];
}

/** What begins the continuation of a line the program had to cut (never the table's `│`). */
export const CONTINUED = "↳ ";

/**
 * Every line of `text` no wider than `columns`: a longer one is cut, and each
 * piece after the first begins with {@link CONTINUED}. What the terminal
 * then shows at the start of a line is what the program put there.
 */
export function fitToWidth(text: string, columns: number): string {
  const room = Math.max(CONTINUED.length + 1, columns);
  return text.split("\n").map((line) => {
    if (screenWidth(line) <= room) return line;
    const [first = "", ...more] = cutHard(line, room);
    const rest = more.join("");
    return [first, ...cutHard(rest, room - CONTINUED.length).map((p) => CONTINUED + p)].join(
      "\n",
    );
  }).join("\n");
}

/** Cuts `line` into pieces of at most `width` columns, anywhere (styling kept in its place). */
function cutHard(line: string, width: number): string[] {
  const { starts, widths } = scan(line);
  const pieces: string[] = [];
  let from = 0, used = 0;
  for (let i = 0; i < widths.length; i++) {
    const w = widths[i] ?? 0;
    if (used + w > width && used > 0) {
      pieces.push(line.slice(from, starts[i]));
      from = starts[i] ?? line.length;
      used = 0;
    }
    used += w;
  }
  pieces.push(line.slice(from));
  return pieces;
}
