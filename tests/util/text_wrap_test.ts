/** Wrapping at spaces: no word is split unless it alone is wider than the line. */
import assert from "node:assert/strict";
import { hanging, visibleWidth, wrapText } from "../../src/util/text_wrap.ts";

const TEXT = "Storage ring ion pump 019 (cell 04) pressure (from pump current), " +
  "the RING:VAC:IP:019:PRES device of the vacuum system";

Deno.test("a wrapped text keeps every word whole and every line within the width", () => {
  for (const width of [20, 21, 33, 80]) {
    const lines = wrapText(TEXT, width);
    for (const l of lines) assert.ok(visibleWidth(l) <= width, `${width}: ${l}`);
    // The one word wider than 20 columns is split at 20; at 21 and wider, nothing is.
    const joined = width > 20 ? lines.join(" ") : lines.join(" ").replace("PRE S", "PRES");
    assert.equal(joined, TEXT, `${width}: nothing lost, no word cut`);
  }
});

Deno.test("only a word wider than the line is split, and its pieces fill the lines", () => {
  assert.deepEqual(wrapText("a RING:VAC:IP:019:PRES b", 8), [
    "a",
    "RING:VAC",
    ":IP:019:",
    "PRES b",
  ]);
});

Deno.test("a no-break space holds its two sides together", () => {
  const lines = wrapText("−4 → −3 deg (Δ\u00a0+1)", 12);
  assert.ok(lines.some((l) => l.includes("(Δ\u00a0+1)")), lines.join("|"));
});

Deno.test("a colour open at a line's end is closed there and opened again on the next", () => {
  const red = "\x1b[31mone two three\x1b[39m";
  const lines = wrapText(red, 8);
  assert.deepEqual(lines, ["\x1b[31mone two\x1b[0m", "\x1b[31mthree\x1b[39m"]);
  assert.equal(visibleWidth(lines[0] ?? ""), 7);
});

Deno.test("wide characters count two columns", () => {
  assert.equal(visibleWidth("加速器"), 6);
  for (const l of wrapText("加速器 加速器 加速器", 7)) assert.ok(visibleWidth(l) <= 7);
});

Deno.test("a hanging label: text beside it when it fits, under it when the label is too wide", () => {
  assert.deepEqual(hanging("  --x", "one two three four five six", 8, 30), [
    "  --x   one two three four",
    "        five six",
  ]);
  assert.deepEqual(hanging("  a label wider than the indent", "text", 8, 40), [
    "  a label wider than the indent",
    "      text",
  ]);
});
