/**
 * Everyday English (`configs/english_words.txt`), read on the first word the
 * index does not know: such a word ("sitting", "feedback") is a word the
 * operator meant, not a misspelling to correct into another ("setting",
 * "readback").
 *
 * @module
 */

/** The list shipped beside the program. */
export const ENGLISH_WORDS_URL = new URL("../../configs/english_words.txt", import.meta.url);

let words: Set<string> | undefined;

/** True when `word` (lower case) is a common English word; false when the list cannot be read. */
export function isEnglishWord(word: string): boolean {
  if (words === undefined) {
    words = new Set();
    try {
      const text = Deno.readTextFileSync(decodeURIComponent(ENGLISH_WORDS_URL.pathname));
      for (const line of text.split("\n")) if (line && !line.startsWith("#")) words.add(line);
    } catch {
      // Without the list every unknown word is taken for a misspelling, as before it existed.
    }
  }
  return words.has(word) || (word.endsWith("s") && words.has(word.slice(0, -1)));
}
