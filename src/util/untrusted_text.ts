/**
 * Text from outside the program (plan fields, facility service strings,
 * sandbox output, model text, file names) rendered so that a terminal shows
 * it and nothing else: no character of it moves the cursor, erases, changes
 * the title, writes the clipboard, reorders the line or hides itself.
 *
 * Every such character is shown as a visible escape, never removed, so the
 * operator sees that something was there:
 *
 * - C0 controls, DEL and C1 controls (U+0080–U+009F, the 8-bit CSI U+009B
 *   too) as `\xHH`: `\x1b`, `\x07`, `\x08`, `\x7f`, `\x9b`. An ESC shown
 *   as `\x1b` leaves the rest of its CSI/OSC/DCS/APC/PM/SOS sequence as plain
 *   printable text, so no sequence, terminated or not, reaches the terminal.
 * - Everything else invisible or reordering as `\u{hhhh}`: bidi overrides,
 *   isolates and marks, zero-width and other format characters (Unicode
 *   category Cf), line and paragraph separators, lone surrogates, Hangul
 *   fillers, the combining grapheme joiner, tag characters; variation
 *   selectors unless they follow a non-ASCII character (an emoji's U+FE0F
 *   stays); a zero-width joiner unless it follows a pictograph (emoji
 *   sequences stay).
 * - A carriage return as `\r`, except in a CR LF pair of multi-line text.
 * - In single-line mode (table cells, prompts, one-line summaries) newline
 *   and tab as `\n` and `\t`; in multi-line mode (bodies) newlines stay and a
 *   tab becomes four spaces.
 *
 * A backslash is not escaped: text that spells `\x1b` shows as typed, which
 * is harmless. Sanitise first, then style: the program's own ANSI colours are
 * added after this and so keep working.
 *
 * @module
 */

/** How the text will be read: one line (cells, prompts) or a body of lines. */
export interface UntrustedOptions {
  /** Keep newlines (each line sanitised); default false: `\n` is shown escaped. */
  multiline?: boolean;
}

/** Characters always shown escaped (lone surrogates are found separately). */
const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFFA0\uFE00-\uFE0F\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u;
const VARIATION = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u180B-\u180D\u180F]/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
const ZWJ = 0x200d;

/** `\xHH` below U+0100, `\u{hhhh}` above: the form every escaped character takes. */
export function escapeCodePoint(cp: number): string {
  if (cp < 0x100) return `\\x${cp.toString(16).padStart(2, "0")}`;
  return `\\u{${cp.toString(16).padStart(4, "0")}}`;
}

/**
 * True when the code point `cp`, after the character `prev` (a code point,
 * or undefined at the start), must be shown escaped. Newline, tab and CR
 * count as unsafe here; the renderers decide how each mode shows them.
 */
export function isUnsafeCodePoint(cp: number, prev: number | undefined): boolean {
  if (cp >= 0xd800 && cp <= 0xdfff) return true; // a lone surrogate
  const ch = String.fromCodePoint(cp);
  if (!UNSAFE.test(ch)) return false;
  if (VARIATION.test(ch)) return prev === undefined || prev < 0x80 || isUnsafeCodePoint(prev, 0);
  if (cp === ZWJ) return prev === undefined || !PICTOGRAPH.test(String.fromCodePoint(prev));
  return true;
}

/**
 * Renders untrusted `text` for a terminal (see the module's documentation for
 * what is escaped and how it looks).
 *
 * @example
 * ```ts
 * untrusted("ok\x1b[2A\rfake"); // "ok\\x1b[2A\\rfake"
 * untrusted("a\nb", { multiline: true }); // "a\nb"
 * ```
 */
export function untrusted(text: string, opts: UntrustedOptions = {}): string {
  // The common case, plain printable text, costs one regex test.
  if (!SUSPECT.test(text)) return text;
  const stream = new UntrustedStream(opts);
  return stream.push(text) + stream.end();
}

/** Anything that may need escaping: controls, format characters, surrogates, fillers, selectors. */
const SUSPECT =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFFA0\uFE00-\uFE0F\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u;

/**
 * {@link untrusted} for text that arrives in pieces (a model's streamed
 * answer): the output of all `push` calls and `end` is exactly
 * `untrusted(whole text)`, however the text was split — a surrogate pair or
 * a CR LF split across pieces is held until the next piece.
 */
export class UntrustedStream {
  readonly #multiline: boolean;
  /** A high surrogate or a CR waiting for the next piece. */
  #pending = "";
  /** The last code point seen, for variation selectors and joiners. */
  #prev: number | undefined;

  constructor(opts: UntrustedOptions = {}) {
    this.#multiline = opts.multiline ?? false;
  }

  /** Renders `piece`; a character that depends on the next piece is held back. */
  push(piece: string): string {
    if (this.#pending === "" && !SUSPECT.test(piece)) {
      // Plain text, the common case: only the last code point is remembered.
      if (piece) this.#prev = lastCodePoint(piece);
      return piece;
    }
    const text = this.#pending + piece;
    this.#pending = "";
    let out = "";
    let plain = 0;
    for (let i = 0; i < text.length;) {
      const cp = text.codePointAt(i) ?? 0;
      const size = cp > 0xffff ? 2 : 1;
      const last = i + size >= text.length;
      if (last && ((cp >= 0xd800 && cp <= 0xdbff) || (cp === 0x0d && this.#multiline))) {
        out += text.slice(plain, i);
        this.#pending = text.slice(i);
        return out;
      }
      if (isUnsafeCodePoint(cp, this.#prev)) {
        out += text.slice(plain, i) + this.#show(cp, text.charCodeAt(i + 1));
        plain = i + size;
      }
      this.#prev = cp;
      i += size;
    }
    return out + text.slice(plain);
  }

  /** Renders what is held back; the stream can be used again afterwards. */
  end(): string {
    // push() holds back only a trailing CR or high surrogate: at the end it stands alone.
    const held = this.#pending;
    this.#pending = "";
    this.#prev = undefined;
    return held ? this.#show(held.charCodeAt(0), NaN) : "";
  }

  #show(cp: number, next: number): string {
    if (cp === 0x0a) return this.#multiline ? "\n" : "\\n";
    if (cp === 0x09) return this.#multiline ? "    " : "\\t";
    if (cp === 0x0d) return this.#multiline && next === 0x0a ? "" : "\\r";
    return escapeCodePoint(cp);
  }
}

/** The last code point of non-empty `text` (a surrogate pair read whole). */
function lastCodePoint(text: string): number {
  const end = text.charCodeAt(text.length - 1);
  const pair = end >= 0xdc00 && end <= 0xdfff && text.length > 1;
  return (pair ? text.codePointAt(text.length - 2) : end) ?? end;
}

/** One code point of a text that {@link untrusted} would escape. */
export interface UnsafeChar {
  /** Index (in code points) in the text. */
  at: number;
  codePoint: number;
}

/**
 * The code points of one-line `text` that {@link untrusted} would escape:
 * what a schema refuses in free text that a person must read as written.
 */
export function unsafeChars(text: string): UnsafeChar[] {
  if (!SUSPECT.test(text)) return [];
  const found: UnsafeChar[] = [];
  let prev: number | undefined;
  let at = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (isUnsafeCodePoint(cp, prev)) found.push({ at, codePoint: cp });
    prev = cp;
    at++;
  }
  return found;
}

/** Every character {@link untrusted} escapes that `JSON.stringify` leaves raw (it escapes C0 only). */
const RAW_IN_JSON =
  /[\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFFA0\uFE00-\uFE0F\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

/**
 * `JSON.stringify(value, null, space)` with every character {@link untrusted}
 * escapes (C0 and C1 controls, DEL, bidi and other format characters, line
 * separators, lone surrogates, fillers, variation selectors, tag characters)
 * written inside its strings as `\uXXXX` escapes: the same JSON value for a
 * parser, nothing a terminal acts on when it is printed. `space` 0 gives one
 * line (a `--stream-json` event).
 *
 * @example
 * ```ts
 * terminalJson({ text: "a\u009b2J" }, 0); // '{"text":"a\\u009b2J"}'
 * ```
 */
export function terminalJson(value: unknown, space = 2): string {
  return (JSON.stringify(value, null, space) ?? "null").replace(RAW_IN_JSON, (ch) => {
    let out = "";
    for (let i = 0; i < ch.length; i++) {
      out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
    return out;
  });
}
