import assert from "node:assert/strict";
import { ManualClock } from "../../../src/adapters/clock.ts";
import { defaultFacility } from "../../../src/facility/facility.ts";
import { openControlSystem } from "../../../src/adapters/mod.ts";
import { createSimulator, Simulator } from "../../../src/adapters/simulator/mod.ts";
import { parseConfig } from "../../../src/config/mod.ts";
import {
  arcSize,
  BASE_DEVICE_COUNT,
  buildScaledFacility,
  nearbyDevices,
  scaledFacility,
} from "../../../src/facility/scale.ts";
import { readNumber, T0 } from "./helpers.ts";

const N = 20_000;

function digest(names: Iterable<string>): string {
  let h = 0x811c9dc5;
  let n = 0;
  for (const name of names) {
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 10, 0x01000193);
    n++;
  }
  return `${n}:${(h >>> 0).toString(16)}`;
}

Deno.test("the default facility is the 3,044 catalogue devices, unchanged by the scale option at its floor", () => {
  const base = defaultFacility();
  assert.equal(base.devices.length, BASE_DEVICE_COUNT);
  assert.equal(scaledFacility(BASE_DEVICE_COUNT), base);
  assert.equal(createSimulator({ devices: BASE_DEVICE_COUNT }).deviceCount, BASE_DEVICE_COUNT);
});

Deno.test("a grown facility keeps every catalogue device with its description, units and limits", () => {
  const base = defaultFacility();
  const grown = buildScaledFacility(N);
  for (const def of base.devices) {
    const same = grown.byName.get(def.name);
    assert.equal(same, def, def.name);
  }
  assert.equal(
    grown.devices.length,
    BASE_DEVICE_COUNT + Math.ceil((N - BASE_DEVICE_COUNT) / arcSize()) * arcSize(),
  );
  assert.ok(grown.devices.length >= N);
});

Deno.test("the same device count gives the same names and descriptions, byte for byte", () => {
  const a = buildScaledFacility(N);
  buildScaledFacility(50_000);
  const b = buildScaledFacility(N);
  const text = (f: typeof a) =>
    f.devices.map((d) => `${d.name}\t${d.info.description}\t${d.info.units}`);
  assert.equal(digest(text(a)), digest(text(b)));
});

Deno.test("grown names are unique, sorted and in the catalogue's SECTION:FAMILY:ID:SIGNAL convention", () => {
  const f = buildScaledFacility(N);
  const seen = new Set<string>();
  let prev = "";
  for (const def of f.devices) {
    const name = def.name;
    assert.ok(name > prev, `${name} sorts after ${prev}`);
    assert.ok(!seen.has(name));
    seen.add(name);
    prev = name;
    if (!name.startsWith("ARC")) continue;
    assert.match(name, /^ARC\d{3}(:[A-Z]+)+(:[HV]?\d{2,3})?(:[A-Z]+)*$/);
    assert.equal(f.byName.get(name), def);
  }
});

Deno.test("grown devices carry descriptions in the catalogue's style, units, writability and alarm limits", () => {
  const f = buildScaledFacility(N);
  const info = (name: string) => {
    const def = f.byName.get(name);
    assert.ok(def, name);
    return def.info;
  };
  assert.equal(info("ARC007:BPM:05:X").description, "Arc 7 BPM 05 (cell 01) horizontal position");
  assert.equal(info("ARC007:BPM:05:X").units, "mm");
  assert.deepEqual(info("ARC007:BPM:05:X").alarm, { lolo: -2, low: -1, high: 1, hihi: 2 });
  assert.equal(
    info("ARC007:COR:V12:SETPT").description,
    "Arc 7 vertical corrector V12 (cell 03) kick setpoint",
  );
  assert.equal(info("ARC007:COR:V12:SETPT").writable, true);
  assert.equal(info("ARC007:COR:V12:RDBK").writable, false);
  assert.equal(
    info("ARC002:VAC:IP:120:PRES").description,
    "Arc 2 ion pump 120 (cell 10) pressure (from pump current)",
  );
  assert.equal(info("ARC002:RF:STN:02:REFL:PWR").description, "Arc 2 RF station 2 reflected power");
  assert.equal(info("ARC002:RF:STN:02:PHASE:SETPT").units, "deg");
  assert.equal(info("ARC002:ENERGY:MEAS").units, "MeV");
  assert.equal(info("ARC002:ENERGY:MEAS").subsystem, "ARC002");
});

Deno.test("names beyond the grown facility do not exist", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  const arcs = Math.ceil((N - BASE_DEVICE_COUNT) / arcSize());
  const last = `ARC${String(arcs).padStart(3, "0")}:BPM:60:X`;
  const beyond = `ARC${String(arcs + 1).padStart(3, "0")}:BPM:01:X`;
  const [ok, gone, bad] = await sim.read([last, beyond, "ARC001:BPM:61:X"]);
  assert.equal(ok?.ok, true);
  assert.equal(gone?.ok, false);
  assert.equal(bad?.ok, false);
  await assert.rejects(
    sim.write(beyond.replace("BPM:01:X", "COR:H01:SETPT"), 0.1),
    /Unknown device/,
  );
});

Deno.test("a generated BPM follows a corrector of its own arc and ignores the other arcs' and the catalogue's", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  const bpm = "ARC003:BPM:17:X";
  const r = sim.responseCoefficient(bpm, "ARC003:COR:H05");
  assert.ok(Math.abs(r) > 0.5, `response ${r}`);
  assert.equal(sim.responseCoefficient(bpm, "ARC004:COR:H05"), 0);
  assert.equal(sim.responseCoefficient(bpm, "ARC003:COR:V05"), 0);
  const before = await readNumber(sim, bpm);
  const otherBefore = await readNumber(sim, "ARC004:BPM:17:X");
  const ringBefore = await readNumber(sim, "RING:BPM:17:X");
  const kick = await readNumber(sim, "ARC003:COR:H05:SETPT");
  await sim.write("ARC003:COR:H05:SETPT", kick + 0.2);
  await sim.write("ARC004:COR:V05:SETPT", 0.3);
  clock.advance(10_000); // correctors slew; 10 s covers any of these steps
  const after = await readNumber(sim, bpm);
  // Noise is 0.005 mm rms at each read.
  assert.ok(
    Math.abs(after - before - 0.2 * r) < 0.05,
    `moved ${after - before}, expected ${0.2 * r}`,
  );
  assert.ok(Math.abs((await readNumber(sim, "ARC004:BPM:17:X")) - otherBefore) < 0.05);
  assert.ok(Math.abs((await readNumber(sim, "RING:BPM:17:X")) - ringBefore) < 0.05);
  const rdbk = await readNumber(sim, "ARC003:COR:H05:RDBK");
  assert.ok(Math.abs(rdbk - (kick + 0.2)) < 0.005);
});

Deno.test("a generated RF station's phase moves its arc's beam energy, and only its arc's", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  const e0 = await readNumber(sim, "ARC005:ENERGY:MEAS");
  assert.ok(Math.abs(e0 - 3000) < 5, `energy ${e0}`);
  const other = await readNumber(sim, "ARC006:ENERGY:MEAS");
  await sim.write(
    "ARC005:RF:STN:01:PHASE:SETPT",
    (await readNumber(sim, "ARC005:RF:STN:01:PHASE:SETPT")) + 40,
  );
  clock.advance(10_000); // the phase slews at 10°/s
  const e1 = await readNumber(sim, "ARC005:ENERGY:MEAS");
  assert.ok(e0 - e1 > 30, `energy fell only from ${e0} to ${e1}`);
  assert.ok(Math.abs((await readNumber(sim, "ARC006:ENERGY:MEAS")) - other) < 2);
});

Deno.test("a 1,000-device batch read over a million-device facility answers every device", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: 1_000_000 });
  assert.ok(sim.deviceCount >= 1_000_000);
  const devs = sim.facility.devices;
  const names = Array.from(
    { length: 1000 },
    (_, i) => devs[Math.floor((i * devs.length) / 1000)]?.name ?? "",
  );
  const readings = await sim.read(names);
  assert.equal(readings.filter((r) => r.ok).length, 1000);
  assert.equal(new Set(readings.map((r) => r.device)).size, 1000);
});

Deno.test("a misspelt name on a grown facility is compared with its arc and the catalogue only, and still finds its match", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  assert.equal(
    nearbyDevices(sim.facility, "ARC003:BPM:05:Z").length,
    arcSize() + BASE_DEVICE_COUNT,
  );
  assert.equal(nearbyDevices(defaultFacility(), "RING:BPM:05:Z").length, BASE_DEVICE_COUNT);
  const [arc, ring] = await sim.read(["ARC003:BPM:05:Z", "RING:BPM:61:X"]);
  assert.match(arc?.error ?? "", /did you mean ARC003:BPM:05:X, ARC003:BPM:05:Y/);
  assert.match(ring?.error ?? "", /did you mean RING:BPM:01:X/);
});

Deno.test("[simulator] devices in the config opens a grown simulator", async () => {
  const cs = await openControlSystem(parseConfig("[simulator]\ndevices = 10000\n", "test.toml"));
  assert.ok(cs instanceof Simulator);
  assert.equal(cs.deviceCount, BASE_DEVICE_COUNT + 4 * arcSize());
  const plain = await openControlSystem(parseConfig("", "test.toml"));
  assert.ok(plain instanceof Simulator);
  assert.equal(plain.deviceCount, BASE_DEVICE_COUNT);
});
