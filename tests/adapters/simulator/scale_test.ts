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
import { ringResponse } from "../../../src/facility/optics.ts";
import { energyLossMeV, rfFrequencyMHz } from "../../../src/facility/ring.ts";
import { readNumber, T0 } from "./helpers.ts";

async function readAllNumbers(sim: Simulator, names: string[]): Promise<number[]> {
  return (await sim.read(names)).map((r) => Number(r.value));
}

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

Deno.test("the default facility is the 3,069 catalogue devices, unchanged by the scale option at its floor", () => {
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
  assert.equal(
    info("ARC002:QUAD:07:CURRENT").description,
    "Arc 2 quadrupole 07 (cell 02) power supply current setpoint",
  );
  assert.equal(
    f.byName.get("ARC002:RF:STN:01:CAV:VOLT"),
    undefined,
    "the arcs have no RF of their own",
  );
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

Deno.test("the arcs are cells of the one ring: a kick in an arc moves every arc's BPMs and the catalogue's by the closed-orbit response", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  const m = sim.model;
  const constants = m.orbit.ringConstants;
  assert.ok(constants);
  const corrector = "ARC003:COR:H05:SETPT";
  const cor = m.optics.lattice.of(sim.facility.byName.get(corrector) as never);
  assert.ok(cor && cor.section === "RING", "an arc corrector sits in the ring");
  const bpms = ["ARC003:BPM:17:X", "ARC004:BPM:17:X", "RING:BPM:17:X", "ARC001:BPM:02:X"];
  const before = await Promise.all(bpms.map((b) => readNumber(sim, b)));
  const kick = await readNumber(sim, corrector);
  await sim.write(corrector, kick + 0.02);
  clock.advance(5_000); // correctors slew at 0.5 mrad/s
  const nu = m.tunes(clock.now(), (sim as unknown as { setpoints: never }).setpoints)[0] ?? 0;
  for (const [i, b] of bpms.entries()) {
    const at = m.optics.lattice.of(sim.facility.byName.get(b) as never);
    assert.ok(at, b);
    const r = ringResponse(at, cor, 0, nu, constants);
    assert.ok(
      Math.abs(r - sim.responseCoefficient(b, corrector)) < 1e-9,
      `${b}: the response it reports`,
    );
    assert.ok(Math.abs(r) > 0.1, `${b} is reached (${r} mm/mrad)`);
    const moved = (await readNumber(sim, b)) - (before[i] ?? 0);
    // Noise is 0.005 mm rms at each read.
    assert.ok(Math.abs(moved - 0.02 * r) < 0.035, `${b}: moved ${moved}, expected ${0.02 * r}`);
  }
  const rdbk = await readNumber(sim, "ARC003:COR:H05:RDBK");
  assert.ok(Math.abs(rdbk - (kick + 0.02)) < 0.005);
});

Deno.test("the grown ring keeps the catalogue's cell, bending radius, RF and fractional tunes; its integer tunes and harmonic grow with it", async () => {
  const clock = new ManualClock(T0);
  const base = createSimulator({ clock });
  const sim = createSimulator({ clock, devices: N });
  const arcs = Math.ceil((N - BASE_DEVICE_COUNT) / arcSize());
  const cells = 20 + 10 * arcs;
  const ring = sim.model.ring;
  const base0 = base.model.ring;
  assert.ok(ring && base0);
  assert.equal(ring.circumferenceM, cells * 14.4);
  assert.equal(ring.harmonic, 480 * cells / 20);
  assert.ok(Math.abs(rfFrequencyMHz(ring) - rfFrequencyMHz(base0)) < 1e-9, "the same RF frequency");
  assert.equal(energyLossMeV(ring), energyLossMeV(base0), "the same bending radius: the same U₀");
  const tunes = sim.model.optics.ringTunes;
  assert.ok(Math.abs((tunes[0] % 1) - 0.23) < 1e-6 && Math.abs((tunes[1] % 1) - 0.31) < 1e-6);
  assert.ok(tunes[0] > 14.23 * (cells / 20) - 1 && tunes[0] < 14.23 * (cells / 20) + 1);
  // One beam, one RF: the four catalogue stations give it I·U₀ between them.
  const [i, ...powers] = await readAllNumbers(sim, [
    "RING:DCCT:CURRENT",
    ...[1, 2, 3, 4].map((n) => `RF:STN:0${n}:FWD:PWR`),
  ]);
  const volts = await readAllNumbers(sim, [1, 2, 3, 4].map((n) => `RF:STN:0${n}:CAV:VOLT`));
  const wall = volts.reduce((s, v) => s + (v * v) / (2 * ring.shuntImpedanceMOhm * 1000), 0);
  const beam = (i ?? 0) * energyLossMeV(ring); // mA × MV = kW
  const total = powers.reduce((s, p) => s + p, 0);
  assert.ok(
    Math.abs(total - wall - beam) < 10,
    `forward ${total} kW = wall ${wall} + beam ${beam}`,
  );
  assert.ok(total < 4 * wall, "a power budget in proportion to the beam's");
});

Deno.test("an arc's beam energy is the ring's less what it has radiated since the RF, and follows the ring's dipoles", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  const ring = sim.model.ring;
  assert.ok(ring);
  const u0 = energyLossMeV(ring);
  const names = ["ARC001:ENERGY:MEAS", "ARC004:ENERGY:MEAS"];
  const [e1, e4] = await readAllNumbers(sim, names);
  const s = names.map((n) =>
    sim.model.optics.lattice.of(sim.facility.byName.get(n) as never)?.s ?? 0
  );
  // Noise is 5 keV per reading.
  assert.ok(
    Math.abs((e1 ?? 0) - (e4 ?? 0) - u0 * (((s[1] ?? 0) - (s[0] ?? 0)) / ring.circumferenceM)) <
      0.02,
    `${e1} − ${e4} against U₀·Δs/C`,
  );
  const i0 = await readNumber(sim, "RING:DIPOLE:CURRENT");
  await sim.write("RING:DIPOLE:CURRENT", i0 + 0.2);
  clock.advance(5_000);
  const [f1] = await readAllNumbers(sim, names);
  const delta = 0.2 / i0;
  assert.ok(Math.abs((f1 ?? 0) - (e1 ?? 0) - ring.energyMeV * delta) < 0.05, `${e1} → ${f1}`);
});

Deno.test("an arc quadrupole moves the ring's tunes by ±β·ΔK·L/4π at its place", async () => {
  const clock = new ManualClock(T0);
  const sim = createSimulator({ clock, devices: N });
  const quad = sim.facility.byName.get("ARC002:QUAD:05:CURRENT");
  assert.ok(quad);
  const q = sim.model.arcQuad(quad);
  assert.ok(q, "arc quadrupole 05 is a defocusing one of its cell");
  const sp = (sim as unknown as { setpoints: never }).setpoints;
  const nu0 = sim.model.tunes(clock.now(), sp);
  const i0 = await readNumber(sim, "ARC002:QUAD:05:CURRENT");
  await sim.write("ARC002:QUAD:05:CURRENT", i0 + 2);
  clock.advance(2_000);
  const nu1 = sim.model.tunes(clock.now(), sp);
  const dk = q.dk(2);
  assert.ok(dk < 0, "a defocusing quadrupole");
  assert.ok(
    Math.abs((nu1[0] ?? 0) - (nu0[0] ?? 0) - (q.at.beta[0] * dk * q.lengthM) / (4 * Math.PI)) <
      1e-9,
  );
  assert.ok(
    Math.abs((nu1[1] ?? 0) - (nu0[1] ?? 0) + (q.at.beta[1] * dk * q.lengthM) / (4 * Math.PI)) <
      1e-9,
  );
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
  assert.equal(
    cs.deviceCount,
    BASE_DEVICE_COUNT + Math.ceil((10_000 - BASE_DEVICE_COUNT) / arcSize()) * arcSize(),
  );
  const plain = await openControlSystem(parseConfig("", "test.toml"));
  assert.ok(plain instanceof Simulator);
  assert.equal(plain.deviceCount, BASE_DEVICE_COUNT);
});
