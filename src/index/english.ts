/**
 * Everyday English (`configs/english_words.txt`, one word a line, sorted),
 * read on the first word the index does not know: such a word ("sitting",
 * "feedback") is a word the operator meant, not a misspelling to correct into
 * another ("setting", "readback"). The text is searched as it is (a binary
 * search over its lines), not turned into a set of 63,000 strings first.
 *
 * @module
 */
import { readPlainTextSync } from "../util/glance_read.ts";

/** The list shipped beside the program. */
export const ENGLISH_WORDS_URL = new URL("../../configs/english_words.txt", import.meta.url);

let text: string | undefined;

/** The largest word list read (the shipped one is well under 2 MiB). */
const MAX_LIST_BYTES = 16 << 20;

/** The list's text ("" when it cannot be read: every unknown word is then a misspelling). */
function list(): string {
  if (text === undefined) {
    try {
      text = readPlainTextSync(decodeURIComponent(ENGLISH_WORDS_URL.pathname), MAX_LIST_BYTES);
    } catch {
      text = "";
    }
  }
  return text;
}

/** True when `word` is a line of the sorted text (header lines start with `#`, before any word). */
function has(t: string, word: string): boolean {
  let lo = 0, hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const start = t.lastIndexOf("\n", mid - 1) + 1;
    let end = t.indexOf("\n", start);
    if (end < 0) end = t.length;
    const line = t.slice(start, end);
    if (line === word) return true;
    if (line < word) lo = end + 1;
    else hi = start;
  }
  return false;
}

/** True when `word` (lower case) is a common English word, or the plural of one. */
export function isEnglishWord(word: string): boolean {
  const t = list();
  return has(t, word) || (word.endsWith("s") && has(t, word.slice(0, -1)));
}
