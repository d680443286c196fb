/**
 * Bracketed paste: the markers are stripped and a paste's line breaks stay
 * in the one line the editor holds.
 */
import assert from "node:assert/strict";
import { PASTED_BREAK, pastedText, PasteFilter } from "../../../src/cli/repl/paste.ts";

Deno.test("a paste of three lines reaches the line editor as one line and comes back as three", () => {
  const line = new PasteFilter().feed("\x1b[200~first\rsecond\r\nthird\x1b[201~");
  assert.equal(line, `first${PASTED_BREAK}second${PASTED_BREAK}third`);
  assert.equal(pastedText(line), "first\nsecond\nthird");
});

Deno.test("a line break typed outside a paste still ends the line", () => {
  assert.equal(new PasteFilter().feed("ab\x1b[200~c\rd\x1b[201~e\r"), `abc${PASTED_BREAK}de\r`);
});

Deno.test("paste markers split across reads are recognised", () => {
  const f = new PasteFilter();
  const parts = ["x\x1b[2", "00~a\r", "b\x1b[20", "1~", "\r"].map((c) => f.feed(c));
  assert.equal(parts.join(""), `xa${PASTED_BREAK}b\r`);
  assert.equal(f.pasting, false);
});

Deno.test("arrow keys and a lone escape pass through untouched", () => {
  const f = new PasteFilter();
  assert.equal(f.feed("\x1b[A\x1b[D"), "\x1b[A\x1b[D");
  assert.equal(f.feed("\x1b"), "\x1b");
});
