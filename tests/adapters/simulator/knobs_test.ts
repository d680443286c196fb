/**
 * The knobs of the live machine and what follows from them: the top-up
 * interlocks, a refill from zero with the shutters closed, alarms that a
 * write raises reaching the alarm log, the RF stations' phases in the vector
 * sum of their voltages, the booster's ramp against the linac's and the
 * ring's energies, and a copy of the facility that runs the same physics.
 */

import assert from "node:assert/strict";
import { ManualClock } from "../../../src/adapters/clock.ts";
import type { Simulator } from "../../../src/adapters/simulator/mod.ts";
import { bunchLengthPs, energyLossMeV } from "../../../src/facility/ring.ts";
import { iso, readNumber, simAt, T0 } from "./helpers.ts";

const MIN = 60_000;

async function read(sim: Simulator, name: string) {
  const [r] = await sim.read([name]);
  assert.ok(r?.ok, name);
  return r;
}

Deno.test("top-up interlocks: no injection without the RF ready, with injection disabled, or without the timing link", async () => {
  const { sim, clock } = simAt();
  assert.equal((await read(sim, "TIMING:INJ:INTLK")).value, "OK");
  await sim.write("TIMING:INJ:ENABLE", "DISABLED");
  assert.equal((await read(sim, "TIMING:INJ:INTLK")).value, "DISABLED");
  await sim.write("TIMING:INJ:ENABLE", "ENABLED");
  // An injector event receiver loses its link: no triggers, no top-up, the current decays.
  sim.addFault({
    kind: "injection",
    cause: "timing",
    device: "TIMING:EVR:02:STATUS",
    at: clock.now(),
  });
  const intlk = await read(sim, "TIMING:INJ:INTLK");
  assert.equal(intlk.value, "TIMING_LINK");
  assert.equal(intlk.severity, "MINOR");
  assert.equal((await read(sim, "DIAG:INJ:EFF")).severity, "INVALID");
  const i0 = await readNumber(sim, "RING:DCCT:CURRENT");
  clock.advance(10 * MIN); // five top-up intervals
  const i1 = await readNumber(sim, "RING:DCCT:CURRENT");
  assert.ok(i1 < i0 - 2, `no refill: ${i0} → ${i1} mA`);
  // A station tripped: the beam is lost, and injection waits for the RF.
  sim.addFault({ kind: "rf-trip", station: 2, cause: "ARC", at: clock.now() });
  clock.advance(MIN);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05);
  assert.equal((await read(sim, "TIMING:INJ:INTLK")).value, "RF_NOT_READY");
});

Deno.test("after a loss the ring is refilled from zero with the shutters closed, and they open when it is full", async () => {
  const { sim, clock } = simAt();
  assert.equal((await read(sim, "BL:03:SHUTTER")).value, "OPEN");
  const t0 = clock.now();
  sim.addFault({
    kind: "rf-trip",
    station: 3,
    cause: "REFL_PWR",
    at: t0,
    reset: t0 + 2 * MIN,
    on: t0 + 4 * MIN,
  });
  clock.advance(MIN);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05);
  assert.equal((await read(sim, "BL:03:SHUTTER")).value, "CLOSED");
  assert.equal((await read(sim, "RF:STN:03:STATUS")).value, "TRIPPED");
  clock.advance(2 * MIN);
  assert.equal((await read(sim, "RF:STN:03:STATUS")).value, "CONDITIONING");
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05, "no injection while conditioning");
  clock.advance(3 * MIN); // back ON, refilling
  const refilling = await readNumber(sim, "RING:DCCT:CURRENT");
  assert.ok(refilling > 10 && refilling < 290, `refilling: ${refilling} mA`);
  assert.equal((await read(sim, "BL:03:SHUTTER")).value, "CLOSED");
  clock.advance(15 * MIN);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) > 290);
  assert.equal((await read(sim, "BL:03:SHUTTER")).value, "OPEN");
});

Deno.test("an alarm a write raises is in the alarm log, at the moment the archive crosses the limit", async () => {
  const { sim, clock } = simAt();
  const bpm = "RING:BPM:12:X";
  const corrector = "RING:COR:H07:SETPT";
  const r = sim.responseCoefficient(bpm, corrector);
  const x0 = await readNumber(sim, bpm);
  const kick = await readNumber(sim, corrector);
  // Enough to take the BPM past its MINOR limit (1 mm), not its MAJOR one (2 mm).
  const step = (1.4 - x0) / r;
  const target = x0 + r * step;
  assert.ok(target > 1.2 && target < 1.9, `the BPM goes to ${target} mm`);
  const at = clock.now();
  await sim.write(corrector, kick + step);
  clock.advance(MIN);
  assert.equal((await read(sim, bpm)).status, "HIGH");
  const entries = await sim.logs({
    source: "alarm",
    from: iso(at - MIN),
    to: iso(clock.now()),
    device: bpm,
  });
  const entry = entries.find((e) => e.status === "HIGH");
  assert.ok(entry, `an alarm entry for ${bpm}: ${entries.map((e) => e.title)}`);
  // The archive crosses 1 mm at the same moment (within the archive's one-second samples and noise).
  const [series] = await sim.archive({ devices: [bpm], from: iso(at), to: iso(at + 20_000) });
  const crossed = series?.samples.find((s) => Number(s.value) >= 1);
  assert.ok(crossed);
  assert.ok(
    Math.abs(Date.parse(crossed.time) - Date.parse(entry.time)) <= 1500,
    `${crossed.time} vs ${entry.time}`,
  );
});

Deno.test("a station's phase turns its voltage out of the vector sum: the bunch lengthens and the beam power moves between stations", async () => {
  const { sim, clock } = simAt();
  const ring = sim.model.ring;
  assert.ok(ring);
  const stations = [1, 2, 3, 4].map((n) => `RF:STN:0${n}`);
  const phase0 = await readNumber(sim, "RF:STN:01:PHASE:SETPT");
  await sim.write("RF:STN:01:PHASE:SETPT", phase0 + 20);
  clock.advance(5_000); // 10°/s
  const volts = await Promise.all(stations.map((s) => readNumber(sim, `${s}:CAV:VOLT`)));
  const phases = [20, 0, 0, 0].map((d) => (d * Math.PI) / 180);
  const re = volts.reduce((s, v, i) => s + v * Math.cos(phases[i] ?? 0), 0);
  const im = volts.reduce((s, v, i) => s + v * Math.sin(phases[i] ?? 0), 0);
  const vEff = Math.hypot(re, im) / 1000;
  assert.ok(vEff < volts.reduce((a, b) => a + b, 0) / 1000 - 0.02, "less than the sum");
  const bunch = await readNumber(sim, "DIAG:BUNCH:LENGTH");
  assert.ok(Math.abs(bunch - bunchLengthPs(ring, vEff)) < 1.5, `${bunch} ps vs σ(V = ${vEff} MV)`);
  // Each station gives the beam I·Vᵢ·cos(ψ + Δφᵢ); together, I·U₀.
  const current = await readNumber(sim, "RING:DCCT:CURRENT");
  const powers = await Promise.all(stations.map((s) => readNumber(sim, `${s}:FWD:PWR`)));
  const beam = powers.map((p, i) =>
    p - (volts[i] ?? 0) ** 2 / (2 * ring.shuntImpedanceMOhm * 1000)
  );
  const u0 = energyLossMeV(ring);
  assert.ok(
    Math.abs(beam.reduce((a, b) => a + b, 0) - current * u0) < 12,
    `${beam} vs I·U₀ ${current * u0}`,
  );
  assert.ok(Math.abs((beam[0] ?? 0) - (beam[1] ?? 0)) > 10, "the dephased station's share differs");
});

Deno.test("the booster ramps from the energy its injection field is set for to the extraction energy, and a mismatched injection field costs capture", async () => {
  const { sim, clock } = simAt();
  const current = (await read(sim, "BOOSTER:RAMP:WF")).value as number[];
  const energy = (await read(sim, "BOOSTER:ENERGY:WF")).value as number[];
  const iInj = await readNumber(sim, "BOOSTER:DIPOLE:INJ:CURRENT");
  const iExt = await readNumber(sim, "BOOSTER:DIPOLE:CURRENT");
  assert.ok(
    Math.abs((current[0] ?? 0) - iInj) < 0.1 && Math.abs(Math.max(...current) - iExt) < 0.1,
  );
  const eExt = await readNumber(sim, "BOOSTER:ENERGY");
  assert.ok(Math.abs(Math.max(...energy) - eExt) < 0.5, "it peaks at the extraction energy");
  assert.ok(Math.abs((energy[0] ?? 0) - 150) < 0.5, "it starts at the linac's design energy");
  assert.ok(Math.abs(eExt - (await readNumber(sim, "RING:ENERGY"))) < 1, "and ends at the ring's");
  // Injected at a field set for another energy, less of the linac's beam is captured.
  const linac = await readNumber(sim, "DIAG:ENERGY:MEAS");
  const eff0 = await readNumber(sim, "DIAG:INJ:EFF");
  const charge0 = await readNumber(sim, "BOOSTER:CHARGE");
  await sim.write("BOOSTER:DIPOLE:INJ:CURRENT", iInj + 0.5);
  clock.advance(2_000);
  const e0 = 150;
  const e1 = (3000 * (iInj + 0.5)) / iExt;
  const acceptance = sim.model.facility.spec.linac.energyAcceptanceMeV;
  const ratio = Math.exp(-(((linac - e1) / acceptance) ** 2) + ((linac - e0) / acceptance) ** 2);
  const eff1 = await readNumber(sim, "DIAG:INJ:EFF");
  assert.ok(Math.abs(eff1 / eff0 - ratio) < 0.03, `efficiency ×${eff1 / eff0}, capture ×${ratio}`);
  assert.ok(Math.abs((await readNumber(sim, "BOOSTER:CHARGE")) / charge0 - ratio) < 0.03);
});

Deno.test("a copy of the facility runs the same physics from the same state, and writes to one do not reach the other", async () => {
  const { sim, clock } = simAt();
  await sim.write("RING:COR:H03:SETPT", (await readNumber(sim, "RING:COR:H03:SETPT")) + 0.02);
  sim.addFault({
    kind: "vacuum-burst",
    gauge: "RING:VAC:IG:20:PRES",
    peakMbar: 5e-8,
    tauMin: 10,
    at: clock.now(),
  });
  clock.advance(30_000);
  const copyClock = new ManualClock(clock.now());
  const copy = sim.clone({ clock: copyClock });
  const names = [
    "RING:BPM:05:X",
    "RING:LIFETIME",
    "RING:DCCT:CURRENT",
    "RING:VAC:IG:20:PRES",
    "RF:STN:01:FWD:PWR",
  ];
  assert.deepEqual(
    await copy.read(names),
    await sim.read(names),
    "the same readings at the same time",
  );
  // A what-if on the copy: the live facility does not see it.
  await copy.write("RF:STN:02:VOLT:SETPT", 300);
  copyClock.advance(60_000);
  clock.advance(60_000);
  assert.ok((await readNumber(copy, "RF:STN:02:CAV:VOLT")) < 310);
  assert.ok((await readNumber(sim, "RF:STN:02:CAV:VOLT")) > 590, "the live station is untouched");
  assert.notEqual(
    await readNumber(copy, "DIAG:BUNCH:LENGTH"),
    await readNumber(sim, "DIAG:BUNCH:LENGTH"),
  );
  // And the other way round.
  await sim.write("RING:COR:V09:SETPT", 0.1);
  assert.notEqual((await copy.read(["RING:COR:V09:SETPT"]))[0]?.value, 0.1);
  assert.equal(T0 < clock.now(), true);
});
