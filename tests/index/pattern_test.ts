import assert from "node:assert/strict";
import { buildIndex } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { segmentConstraints } from "../../src/index/pattern.ts";

const facility = defaultFacility();
const index = await buildIndex(simulatorIndexSource(facility), await loadSynonyms());
const names = facility.devices.map((d) => d.name);

const PATTERNS = [
  "*",
  "LINAC:COR:H*:SETPT",
  "*BPM*",
  "*bpm*",
  "*Q1*",
  "*bpm*:x",
  "RING:BPM:?1:*",
  "*:01",
  "*:01:*",
  "RF:STN:0?:*PWR",
  "*TEMP",
  "CW:*:TEMP:*",
  "*:VAC:IP:0*0:PRES",
  "RING:Q1*",
  "*IP:01*",
  "*:H0*",
  "TIMING:EVR:1?:OUT?:DELAY",
  "RING:BPM:*:X",
  "NO:SUCH:*",
  "*.*",
  "?ING:*",
  "*G:B*M:0*",
];

Deno.test("every wildcard pattern finds exactly what a scan over every name finds, in name order", () => {
  for (const p of PATTERNS) {
    const re = wildcardToRegExp(p);
    const expected = names.filter((n) => re.test(n));
    const page = index.match({ pattern: p, limit: 10_000 });
    assert.equal(page.total, expected.length, p);
    assert.deepEqual(page.devices.map((d) => d.name), expected, p);
  }
});

Deno.test("filters narrow a pattern: subsystem, writability, properties and tags", () => {
  const setpoints = index.match({
    pattern: "*",
    subsystem: "linac",
    writable: true,
    limit: 10_000,
  });
  const expected = facility.devices.filter((d) => d.info.subsystem === "LINAC" && d.info.writable);
  assert.deepEqual(setpoints.devices.map((d) => d.name), expected.map((d) => d.name));
  const cell4 = index.match({ pattern: "RING:BPM:*", properties: { cell: "4" }, limit: 100 });
  assert.deepEqual(
    cell4.devices.map((d) => d.name).filter((n) => /:[0-9]+:X$/.test(n)),
    ["RING:BPM:10:X", "RING:BPM:11:X", "RING:BPM:12:X"],
  );
  const tagged = index.match({ pattern: "LINAC:QUAD:*", tags: ["writ*"], limit: 100 });
  assert.ok(tagged.devices.length === 20 && tagged.devices.every((d) => d.writable));
});

Deno.test("pages of a pattern are stable: the same total, no name twice, none missing", () => {
  const all = index.match({ pattern: "RING:*", limit: 10_000 });
  const seen: string[] = [];
  for (let offset = 0; offset < all.total; offset += 97) {
    const page = index.match({ pattern: "RING:*", offset, limit: 97 });
    assert.equal(page.total, all.total);
    seen.push(...page.devices.map((d) => d.name));
  }
  assert.deepEqual(seen, all.devices.map((d) => d.name));
});

Deno.test("a regular expression is tested against every name", () => {
  const page = index.match({ regex: /^RING:BPM:0[1-3]:(X|Y)$/i, limit: 100 });
  assert.deepEqual(page.devices.map((d) => d.name), [
    "RING:BPM:01:X",
    "RING:BPM:01:Y",
    "RING:BPM:02:X",
    "RING:BPM:02:Y",
    "RING:BPM:03:X",
    "RING:BPM:03:Y",
  ]);
});

Deno.test("a pattern's literal pieces become constraints on whole, leading, trailing or inner segments", () => {
  assert.deepEqual(segmentConstraints("LINAC:COR:H*:SETPT"), [
    { text: "LINAC", how: "equals" },
    { text: "COR", how: "equals" },
    { text: "H", how: "startsWith" },
    { text: "SETPT", how: "equals" },
  ]);
  assert.deepEqual(segmentConstraints("*bpm*"), [{ text: "BPM", how: "contains" }]);
  assert.deepEqual(segmentConstraints("*:01"), [{ text: "01", how: "equals" }]);
});

/** The wildcard as the regular expression a scan would test (the reference the index must equal). */
function wildcardToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(
    /\?/g,
    ".",
  );
  return new RegExp(`^${body}$`, "i");
}
