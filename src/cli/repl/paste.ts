/**
 * Bracketed paste: a terminal asked with `ESC [?2004h` wraps pasted text in
 * `ESC [200~` … `ESC [201~`, so a paste of several lines can be told from
 * lines typed one by one and sent as one message.
 *
 * @module
 */

/** Asks the terminal to mark pastes. */
export const PASTE_ON = "\x1b[?2004h";
/** Back to plain pastes (on leaving the prompt, on exit, on a stop signal). */
export const PASTE_OFF = "\x1b[?2004l";
const START = "\x1b[200~";
const END = "\x1b[201~";
/**
 * What a line break inside a paste becomes in the line editor, which holds
 * one line; {@link pastedText} turns it back into a line break.
 */
export const PASTED_BREAK = "↵";

/**
 * Strips the paste markers from the terminal's input and turns line breaks
 * inside a paste into {@link PASTED_BREAK}, so the line editor sees one line.
 * A marker split across two chunks is held back until the next one.
 *
 * @example
 * ```ts
 * new PasteFilter().feed("\x1b[200~a\rb\x1b[201~"); // "a↵b"
 * ```
 */
export class PasteFilter {
  #pasting = false;
  #held = "";

  /** The text to give the line editor for `chunk`. */
  feed(chunk: string): string {
    let rest = this.#held + chunk;
    this.#held = "";
    let out = "";
    while (rest) {
      const marker = this.#pasting ? END : START;
      const at = rest.indexOf(marker);
      if (at < 0) {
        const keep = heldPrefix(rest, marker);
        this.#held = rest.slice(rest.length - keep);
        out += this.#text(rest.slice(0, rest.length - keep));
        break;
      }
      out += this.#text(rest.slice(0, at));
      rest = rest.slice(at + marker.length);
      this.#pasting = !this.#pasting;
    }
    return out;
  }

  /** True between the start and the end marker of a paste. */
  get pasting(): boolean {
    return this.#pasting;
  }

  #text(s: string): string {
    return this.#pasting ? s.replace(/\r\n|\r|\n/g, PASTED_BREAK) : s;
  }
}

/** Length of the longest end of `s` (two characters or more) that begins `marker`. */
function heldPrefix(s: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, s.length); n >= 2; n--) {
    if (marker.startsWith(s.slice(s.length - n))) return n;
  }
  return 0;
}

/** The message a line holds: pasted line breaks are line breaks again. */
export function pastedText(line: string): string {
  return line.replaceAll(PASTED_BREAK, "\n");
}
