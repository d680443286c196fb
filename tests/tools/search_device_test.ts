import assert from "node:assert/strict";
import { createRegistry } from "../../src/tools/mod.ts";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { defaultFacility } from "../../src/facility/facility.ts";
import { simulatorIndexSource } from "../../src/adapters/simulator/index_source.ts";
import { buildIndex } from "../../src/index/mod.ts";
import { loadSynonyms } from "../../src/index/synonyms.ts";

const index = await buildIndex(simulatorIndexSource(defaultFacility()), await loadSynonyms());

function registry(withIndex = true) {
  const cs = createSimulator({ index: () => Promise.resolve(index) });
  return createRegistry(
    {
      cs,
      now: () => Date.now(),
      ...(withIndex ? { devices: { index: () => Promise.resolve(index) } } : {}),
    },
    { maxOutputChars: 1_000_000, timeoutMs: 10_000 },
  );
}

type Row = Record<string, unknown>;
async function search(args: Row, withIndex = true): Promise<{ ok: boolean; result: Row }> {
  const out = await registry(withIndex).execute(
    "search_device",
    JSON.stringify(args),
    new AbortController().signal,
  );
  return { ok: out.ok, result: out.result as Row };
}

Deno.test("search_device reads words as an informal query: ranked, with understood terms and reasons", async () => {
  const { ok, result } = await search({ pattern: "reflected power ring rf stations" });
  assert.ok(ok);
  assert.equal(result.mode, "informal");
  assert.equal(result.total, 4);
  const devices = result.devices as Row[];
  assert.equal(devices[0]?.name, "RF:STN:01:REFL:PWR");
  assert.ok(Array.isArray(devices[0]?.matched) && typeof devices[0]?.score === "number");
});

Deno.test("search_device keeps pattern semantics, and passes property and tag filters", async () => {
  const plain = await search({ pattern: "RING:BPM:*:X", limit: 200 });
  assert.equal(plain.result.mode, "pattern");
  assert.equal(plain.result.total, 120); // :X and :TBT:X, as the scan found them
  const cell = await search({ pattern: "RING:COR:*", properties: { cell: "4", kind: "setpoint" } });
  assert.deepEqual((cell.result.devices as Row[]).map((d) => d.name), [
    "RING:COR:H07:SETPT",
    "RING:COR:H08:SETPT",
    "RING:COR:V07:SETPT",
    "RING:COR:V08:SETPT",
  ]);
  const forced = await search({ pattern: "bpm 11", mode: "pattern" });
  assert.equal(forced.result.mode, "pattern");
  assert.equal(forced.result.total, 0);
});

Deno.test("search_device answers nothing found with the nearest families", async () => {
  const { result } = await search({ pattern: "LINAC:KLYS:*:FWD" });
  assert.equal(result.total, 0);
  const near = result.nearest_families as Row[];
  assert.ok(near.some((f) => f.pattern === "LINAC:KLY:*:FWD:PWR"), JSON.stringify(near));
});

Deno.test("a regular expression or words on a backend without an index is a readable refusal", async () => {
  const { ok, result } = await search({ pattern: "horizontal steerers" }, false);
  assert.equal(ok, false);
  assert.match(String(result.error), /needs the device index.*search with a \* \? pattern/);
  const re = await search({ pattern: "/^RING:BPM:0[1-2]:X$/" });
  assert.deepEqual((re.result.devices as Row[]).map((d) => d.name), [
    "RING:BPM:01:X",
    "RING:BPM:02:X",
  ]);
});

Deno.test("property and tag filters narrow a search by words", async () => {
  const { ok, result } = await search({ pattern: "ring correctors", properties: { cell: "4" } });
  assert.equal(ok, true, JSON.stringify(result));
  const devices = result.devices as Row[];
  assert.ok(devices.length > 0);
  assert.ok(
    devices.every((d) => /^RING:COR:[HV]0[78]:/.test(String(d.name))),
    JSON.stringify(devices[0]),
  );
});

Deno.test("a regular expression over a facility's very long name is answered in bounded time, or refused in words", async () => {
  // As long as the index holds one (1,024 characters), past where the built-in engine stops.
  const long = "SR:" + "A".repeat(1_017);
  const rec = (name: string) => ({
    name,
    description: "",
    units: "",
    writable: false,
    properties: {},
    tags: [],
  });
  const hostile = await buildIndex({
    id: "test:long-names",
    async *records() {
      yield [rec("SR:BPM:01:Z"), rec(long)];
    },
  }, await loadSynonyms());
  const tools = createRegistry(
    {
      cs: createSimulator(),
      now: () => Date.now(),
      devices: { index: () => Promise.resolve(hostile) },
    },
    { maxOutputChars: 1_000_000, timeoutMs: 10_000 },
  );
  const call = (pattern: string) =>
    tools.execute("search_device", JSON.stringify({ pattern }), new AbortController().signal);
  const found = await call("/SR:.*Z/");
  assert.ok(found.ok, JSON.stringify(found));
  assert.equal((found.result as Row).total, 1);
  const refused = await call("/(?=SR).*Z/");
  assert.equal(refused.ok, false);
  assert.match(JSON.stringify(refused), /1020 characters.*write it without them/);
});
