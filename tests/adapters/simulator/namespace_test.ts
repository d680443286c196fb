import assert from "node:assert/strict";
import { DEFAULT_PAGE_SIZE } from "../../../src/adapters/simulator/mod.ts";
import { readNumber, simAt } from "./helpers.ts";
import { energyLossMeV } from "../../../src/facility/ring.ts";

const REQUIRED = [
  "LINAC:BPM:01:X",
  "LINAC:BPM:20:Y",
  "LINAC:COR:H01:SETPT",
  "LINAC:COR:H10:RDBK",
  "LINAC:COR:V01:SETPT",
  "LINAC:COR:V10:RDBK",
  "RF:PHASE:SETPT",
  "RF:PHASE:RDBK",
  "RF:AMPL:SETPT",
  "DIAG:ENERGY:MEAS",
  "RING:Q1:CURRENT",
  "RING:Q5:CURRENT",
  "LINAC:QUAD:01:CURRENT",
  "LINAC:QUAD:20:CURRENT",
  "RING:BPM:01:X",
  "RING:BPM:60:Y",
  "RING:COR:H01:SETPT",
  "RING:COR:V40:RDBK",
  "RF:STN:01:FWD:PWR",
  "RF:STN:04:REFL:PWR",
  "RF:STN:03:CAV:VOLT",
  "RF:STN:03:STATUS",
  "RF:STN:03:INTLK",
  "RING:VAC:IG:01:PRES",
  "RING:VAC:IP:001:CURRENT",
  "RING:BLM:120:LOSS",
  "RING:DCCT:CURRENT",
  "RING:LIFETIME",
  "TIMING:EVR:01:OUT0:DELAY",
  "CW:LOOP:01:FLOW",
  "MACHINE:MODE",
];

Deno.test("every required facility name exists and describes itself fully", async () => {
  const { sim } = simAt();
  const infos = await sim.describe(REQUIRED);
  for (const info of infos) {
    assert.ok(info.exists, info.device);
    assert.ok(info.description.length > 10, `${info.device} has a description`);
    assert.equal(info.subsystem, info.device.split(":")[0]);
  }
  const setpt = infos.find((i) => i.device === "LINAC:COR:H01:SETPT");
  assert.deepEqual(
    [setpt?.units, setpt?.writable, setpt?.type, setpt?.limits],
    ["mrad", true, "number", { min: -5, max: 5 }],
  );
  const rdbk = infos.find((i) => i.device === "LINAC:COR:H10:RDBK");
  assert.equal(rdbk?.writable, false);
  const status = infos.find((i) => i.device === "RF:STN:03:STATUS");
  assert.equal(status?.type, "enum");
  assert.ok(status?.labels?.includes("TRIPPED"));
  const bpm = infos.find((i) => i.device === "RING:BPM:01:X");
  assert.deepEqual(bpm?.alarm, { lolo: -2, low: -1, high: 1, hihi: 2 });
});

Deno.test("the namespace holds a few thousand devices in facility-sized families", async () => {
  const { sim } = simAt();
  assert.ok(sim.deviceCount >= 3000 && sim.deviceCount <= 5000, String(sim.deviceCount));
  const count = async (pattern: string) => (await sim.search({ pattern })).total;
  assert.equal(await count("*"), sim.deviceCount);
  assert.equal(await count("LINAC:BPM:*:X"), 20);
  assert.equal(await count("RING:BPM:??:X"), 60);
  assert.equal(await count("RING:BPM:*:X"), 120, "the wildcard spans segments: X and TBT:X");
  assert.equal(await count("LINAC:COR:H*:SETPT"), 10);
  assert.equal(await count("LINAC:COR:V*:SETPT"), 10);
  assert.equal(await count("RING:COR:*:SETPT"), 80);
  assert.equal(await count("LINAC:QUAD:*:CURRENT"), 20);
  assert.equal(await count("RING:Q?:CURRENT"), 5);
  assert.equal(await count("RF:STN:*:STATUS"), 4);
});

Deno.test("every device type is represented, including waveforms, enums and strings", async () => {
  const { sim } = simAt();
  const all = (await sim.search({ pattern: "*", limit: 10_000 })).devices;
  const types = new Set(all.map((d) => d.type));
  assert.deepEqual([...types].sort(), ["enum", "number", "string", "waveform"]);
  const [tbt, probe, crew] = await sim.read([
    "RING:BPM:07:TBT:X",
    "RF:STN:02:PROBE:WF",
    "MACHINE:SHIFT:CREW",
  ]);
  assert.ok(Array.isArray(tbt?.value) && tbt.value.length === 256);
  assert.ok(Array.isArray(probe?.value) && probe.value.length === 256);
  assert.match(String(crew?.value), /^Crew [A-E]: /);
});

Deno.test("search pages through a sorted result with a stable total", async () => {
  const { sim } = simAt();
  const first = await sim.search({ pattern: "RING:BPM:*" });
  assert.equal(first.total, 300);
  assert.equal(first.devices.length, DEFAULT_PAGE_SIZE);
  const names: string[] = [];
  for (let offset = 0; offset < first.total; offset += 70) {
    const page = await sim.search({ pattern: "RING:BPM:*", offset, limit: 70 });
    assert.equal(page.total, 300);
    assert.equal(page.offset, offset);
    names.push(...page.devices.map((d) => d.device));
  }
  assert.equal(names.length, 300);
  assert.equal(new Set(names).size, 300);
  assert.deepEqual(names, [...names].sort());
  const beyond = await sim.search({ pattern: "RING:BPM:*", offset: 1000 });
  assert.deepEqual([beyond.total, beyond.devices.length], [300, 0]);
});

Deno.test("search wildcards match whole names, case-insensitively", async () => {
  const { sim } = simAt();
  const page = await sim.search({ pattern: "ring:bpm:0?:x" });
  assert.deepEqual(
    page.devices.map((d) => d.device),
    [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `RING:BPM:0${n}:X`),
  );
  assert.equal((await sim.search({ pattern: "RING:BPM" })).total, 0, "no implicit prefix match");
  assert.equal((await sim.search({ pattern: "*:CAV:VOLT" })).total, 4);
  assert.equal((await sim.search({ pattern: "RF:PHASE:SETPT" })).total, 1);
});

Deno.test("search filters by subsystem and writability", async () => {
  const { sim } = simAt();
  const rf = await sim.search({ pattern: "*", subsystem: "rf", limit: 1000 });
  assert.ok(rf.total > 40);
  assert.ok(rf.devices.every((d) => d.subsystem === "RF"));
  const writable = await sim.search({ pattern: "LINAC:COR:*", writable: true, limit: 100 });
  assert.equal(writable.total, 20);
  assert.ok(writable.devices.every((d) => d.writable && d.device.endsWith(":SETPT")));
  const readOnly = await sim.search({ pattern: "LINAC:COR:*", writable: false });
  assert.equal(readOnly.total, 60);
});

Deno.test("reading unknown devices gives per-device errors with suggestions", async () => {
  const { sim } = simAt();
  const [good, typo, lower, nonsense, family] = await sim.read([
    "LINAC:BPM:05:X",
    "LINAC:COR:H1:SETPT",
    "linac:bpm:01:x",
    "XYZ:NOTHING",
    "RF:STN:09:FWD:POWER:EXTRA",
  ]);
  assert.equal(good?.ok, true);
  assert.equal(typo?.ok, false);
  assert.equal(typo?.value, null);
  assert.match(
    typo?.error ?? "",
    /Unknown device "LINAC:COR:H1:SETPT"; did you mean LINAC:COR:H01:SETPT/,
  );
  assert.match(lower?.error ?? "", /did you mean LINAC:BPM:01:X\?/);
  assert.equal(nonsense?.error, 'Unknown device "XYZ:NOTHING"');
  assert.match(family?.error ?? "", /RF:STN:\*/);
  for (const r of [typo, lower, nonsense, family]) assert.ok(!(r?.error ?? "").includes("\n"));
});

Deno.test("describing an unknown device says it does not exist", async () => {
  const { sim } = simAt();
  const [info] = await sim.describe(["LINAC:BPM:21:X"]);
  assert.equal(info?.exists, false);
  assert.match(info?.description ?? "", /did you mean/);
});

Deno.test("callers may edit returned device facts without changing the facility", async () => {
  const { sim } = simAt();
  const [info] = await sim.describe(["LINAC:COR:H01:SETPT"]);
  assert.ok(info?.limits);
  info.limits.max = 99;
  info.description = "edited";
  const [again] = (await sim.search({ pattern: "LINAC:COR:H01:SETPT" })).devices;
  assert.deepEqual([again?.limits?.max, again?.description.startsWith("Linac")], [5, true]);
  await assert.rejects(sim.write("LINAC:COR:H01:SETPT", 50), /outside its limits/);
});

Deno.test("every device AGENT.md names exists, and the numbers it quotes are the model's", async () => {
  const text = await Deno.readTextFile(new URL("../../../AGENT.md", import.meta.url));
  const { sim } = simAt();
  const names = [...text.matchAll(/`([A-Z][A-Z0-9]*(?::[A-Z0-9]+)+)`/g)].map((m) => m[1] as string);
  assert.ok(names.length > 40, `${names.length} names`);
  const missing = names.filter((n) =>
    n !== "SECTION:FAMILY:ID:SIGNAL" && !sim.facility.byName.has(n)
  );
  assert.deepEqual(missing, []);
  const ring = sim.model.ring;
  assert.ok(ring);
  const quads = new Map(sim.model.optics.quads.map((q) => [q.magnet.name, q]));
  const perAmp = (name: string, plane: 0 | 1) => {
    const q = quads.get(name);
    assert.ok(q, name);
    return Math.abs((q.weight[plane] * q.strength) / Number(sim.model.initial.get(name)));
  };
  const claims: [string, number, number][] = [
    ["α_c = 5.6·10⁻³", ring.alphaC, 5.6e-3],
    ["0.93 MeV", energyLossMeV(ring), 0.93],
    ["Q1 … 0.026", perAmp("RING:Q1:CURRENT", 0), 0.026],
    ["Q3 … 0.042", perAmp("RING:Q3:CURRENT", 0), 0.042],
    ["Q2 … 0.028", perAmp("RING:Q2:CURRENT", 1), 0.028],
    ["Q4 … 0.032", perAmp("RING:Q4:CURRENT", 1), 0.032],
  ];
  for (const [claim, value, said] of claims) {
    assert.ok(Math.abs(value / said - 1) < 0.03, `AGENT.md says ${claim}; the model has ${value}`);
    assert.ok(text.includes(claim.split(" … ").pop() as string), `AGENT.md quotes ${claim}`);
  }
  const lifetime = await readNumber(sim, "RING:LIFETIME");
  assert.ok(lifetime > 8 && lifetime < 12, `"about 10 h": ${lifetime}`);
});
