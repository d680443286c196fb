/** The everyday-English list is searched as sorted text: every word in it is found, no other. */
import assert from "node:assert/strict";
import { ENGLISH_WORDS_URL, isEnglishWord } from "../../src/index/english.ts";

Deno.test("every word of the list is found and misspellings are not", async () => {
  const text = await Deno.readTextFile(ENGLISH_WORDS_URL);
  const words = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  assert.ok(words.length > 50_000);
  assert.deepEqual(words.filter((w) => !isEnglishWord(w)), []);
  for (const w of ["sitting", "feedback", "hot", "magnets", "aardvark"]) {
    assert.ok(isEnglishWord(w), w);
  }
  for (const w of ["qaud", "steerrer", "klystorn", "vaccum", "setpiont", "zzqx", ""]) {
    assert.equal(isEnglishWord(w), false, w);
  }
});
