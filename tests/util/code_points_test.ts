import assert from "node:assert/strict";
import { asciiReading, describeCodePoint } from "../../src/util/code_points.ts";

Deno.test("a look-alike is named with its Unicode name, other code points by number", () => {
  assert.equal(describeCodePoint(0x0421), "U+0421 CYRILLIC CAPITAL LETTER ES");
  assert.equal(describeCodePoint(0x212a), "U+212A KELVIN SIGN");
  assert.equal(describeCodePoint(0x202e), "U+202E RIGHT-TO-LEFT OVERRIDE");
  assert.equal(describeCodePoint(0xff21), "U+FF21 FULLWIDTH FORM");
  assert.equal(describeCodePoint(0x4e00), "U+4E00");
});

Deno.test("a name of Cyrillic and Greek look-alikes reads as the ASCII it passes for", () => {
  assert.equal(asciiReading("SR:\u0412\u0420\u041c01:X"), "SR:BPM01:X");
  assert.equal(asciiReading("\u0391\u039c\u03a1"), "AMP");
  assert.equal(asciiReading("RF\u200b:PHASE"), "RF:PHASE");
  assert.equal(asciiReading("\uff32\uff26"), "RF");
  assert.equal(asciiReading("RF\u001b[2J"), undefined);
  assert.equal(asciiReading("RF\u4e00"), undefined);
});
