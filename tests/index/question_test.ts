/** Questions as operators ask them: framing, selections, bound numbers, lists, intent, honesty. */
import assert from "node:assert/strict";
import { buildIndex, type DeviceIndex, rankedSearch } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { naturalCompare, stemOf } from "../../src/index/order.ts";

const index: DeviceIndex = await buildIndex(
  simulatorIndexSource(defaultFacility()),
  await loadSynonyms(),
);
const names = (q: string, limit = 50) =>
  rankedSearch(index, q, { limit }).devices.map((d) => d.name);

Deno.test("a question's framing is not part of what it asks for", () => {
  assert.deepEqual(
    names("what are the horizontal corrector setpoints in the linac?"),
    names("linac horizontal corrector setpoints"),
  );
  assert.deepEqual(
    names("can you show me the ion pump pressures in cell 4 please"),
    names("ion pump pressure cell 4"),
  );
});

Deno.test("an ordinal or a selection takes devices in name order", () => {
  assert.deepEqual(names("the second linac quad setpoint"), ["LINAC:QUAD:02:CURRENT"]);
  assert.deepEqual(names("the last three horizontal corrector setpoints in the ring"), [
    "RING:COR:H38:SETPT",
    "RING:COR:H39:SETPT",
    "RING:COR:H40:SETPT",
  ]);
  assert.deepEqual(names("first 2 linac ion gauges"), [
    "LINAC:VAC:IG:01:PRES",
    "LINAC:VAC:IG:02:PRES",
  ]);
  assert.deepEqual(names("second to last rf station forward power"), ["RF:STN:03:FWD:PWR"]);
  // A device's signals are counted once: the second klystron is all of klystron 2.
  assert.ok(names("the second linac klystron").every((n) => n.startsWith("LINAC:KLY:02:")));
  assert.equal(rankedSearch(index, "the third bpm in the ring").selection, "third");
  // "first fault" is a thing, not a selection.
  const fault = rankedSearch(index, "rf station first fault");
  assert.equal(fault.selection, undefined);
  assert.equal(fault.total, 4);
});

Deno.test("a number is bound to the word it follows", () => {
  assert.deepEqual(names("trigger delays for EVR 3"), [
    "TIMING:EVR:03:OUT0:DELAY",
    "TIMING:EVR:03:OUT1:DELAY",
    "TIMING:EVR:03:OUT2:DELAY",
    "TIMING:EVR:03:OUT3:DELAY",
  ]);
  // H3 is corrector H03 (of every section), not BPM 3 nor anything numbered 3.
  assert.ok(names("H3 setpoint").every((n) => /:COR:H03:SETPT$/.test(n)));
  assert.deepEqual(names("klystron 3 status"), ["LINAC:KLY:03:STATUS"]);
  // Read apart only when no name binds the number to the word.
  const loose = rankedSearch(index, "cavity 3 temperature");
  assert.deepEqual(loose.devices.map((d) => d.name), ["RF:STN:03:CAV:TEMP"]);
  assert.ok(loose.note?.includes("cavity 3"));
});

Deno.test("lists and ranges are read in the ways people write them", () => {
  const want = ["LINAC:QUAD:10:RDBK", "LINAC:QUAD:11:RDBK", "LINAC:QUAD:12:RDBK"];
  for (
    const q of [
      "linac quad readbacks 10 through 12",
      "linac quad 10-12 readbacks",
      "linac quad 10 to 12 readbacks",
      "linac quads 10, 11 and 12 readbacks",
      "linac quad readbacks between 10 and 12",
      "linac quad 10..12 readbacks",
    ]
  ) assert.deepEqual(names(q), want, q);
  // "cells 19 and 20": both cells, 20 is not a device number.
  const cells = names("ring bpm x cells 19 and 20").sort();
  assert.deepEqual(
    cells,
    [55, 56, 57, 58, 59, 60].flatMap((k) => [
      `RING:BPM:${k}:TBT:X`,
      `RING:BPM:${k}:X`,
    ]),
  );
  assert.deepEqual(names("H3-H5 linac setpoints"), [
    "LINAC:COR:H03:SETPT",
    "LINAC:COR:H04:SETPT",
    "LINAC:COR:H05:SETPT",
  ]);
});

Deno.test("intent words keep the setpoint, the readback or what can be adjusted", () => {
  assert.deepEqual(names("actual septum current"), ["BTS:SEPTUM:RDBK"]);
  assert.deepEqual(names("requested cavity voltage station 3"), ["RF:STN:03:VOLT:SETPT"]);
  const adjustable = rankedSearch(index, "what can I adjust in the BTS", { limit: 100 });
  assert.equal(adjustable.total, 29);
  assert.ok(adjustable.devices.every((d) => d.writable && d.name.startsWith("BTS:")));
  assert.deepEqual(adjustable.intents, ["adjustable"]);
  // Among one device's signals, with no intent, the setpoint first, then the readback.
  const h3 = names("linac horizontal corrector 3");
  assert.deepEqual(h3.slice(0, 2), ["LINAC:COR:H03:SETPT", "LINAC:COR:H03:RDBK"]);
  assert.equal(h3[h3.length - 1], "LINAC:COR:H03:STATUS");
});

Deno.test("when no device is everything asked for, the answer is empty and says what is missing", () => {
  for (const q of ["linac sextupoles", "undulator 15 gap", "booster BPMs", "evr 40 status"]) {
    const page = rankedSearch(index, q);
    assert.equal(page.total, 0, `${q}: ${page.devices.map((d) => d.name).join(", ")}`);
    assert.ok(page.unmatched.length > 0 && page.note, q);
  }
  const page = rankedSearch(index, "undulator 15 gap");
  assert.deepEqual(page.unmatched, ["undulator 15"]);
  assert.ok(page.suggestions.every((d) => d.name.startsWith("ID:")), page.suggestions[0]?.name);
  // The linac-to-booster line is not the booster.
  assert.ok(rankedSearch(index, "booster BPMs").suggestions.length > 0);
});

Deno.test("only words that are not words are corrected", () => {
  const feedback = rankedSearch(index, "what is sitting in the feedback");
  assert.deepEqual(feedback.ignored, ["sitting", "feedback"]);
  assert.equal(feedback.total, 0);
  assert.ok(!feedback.terms.some((t) => t.includes("≈")));
  assert.deepEqual(rankedSearch(index, "klystorn temps").terms, ["klystorn≈klystron", "temps"]);
  // A word no device and no dictionary knows, and nothing like it: nothing is called so.
  const none = rankedSearch(index, "zqxv gauges");
  assert.equal(none.total, 0);
  assert.deepEqual(none.unmatched, ["zqxv"]);
});

Deno.test("a plural at the end of a phrase reads as the phrase", () => {
  assert.deepEqual(names("beam loss monitors cell 2"), names("beam loss monitor cell 2"));
  assert.deepEqual(names("linac event receivers"), names("linac event receiver"));
});

Deno.test("property and tag filters apply to informal search", () => {
  const page = rankedSearch(index, "correctors", { properties: { cell: "4" }, limit: 100 });
  assert.ok(page.total > 0);
  assert.ok(page.devices.every((d) => /^RING:COR:[HV]0[78]:/.test(d.name)), page.devices[0]?.name);
  const tagged = rankedSearch(index, "linac quadrupoles", { tags: ["readback"], limit: 100 });
  assert.ok(tagged.total > 0 && tagged.devices.every((d) => d.name.endsWith(":RDBK")));
  assert.equal(
    rankedSearch(index, "linac quadrupoles", { properties: { cell: "99" } }).total,
    0,
  );
});

Deno.test("names are counted as people count them", () => {
  assert.ok(naturalCompare("SR:C3-X", "SR:C10-X") < 0);
  assert.ok(naturalCompare("BPM:02", "BPM:10") < 0);
  assert.equal(stemOf("SR:C03-MG{PS:QH1}I:Sp1-SP"), "SR:C03-MG{PS:QH1}");
  assert.equal(stemOf("RING:COR:H03:SETPT"), "RING:COR:H03");
  assert.equal(stemOf("RING:DCCT:CURRENT"), "RING:DCCT:CURRENT");
});
