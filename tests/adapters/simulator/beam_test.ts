/**
 * The stored beam against its physics: lifetime, decay without injection,
 * loss at the RF, the aperture and a resonance, invalid readings without beam,
 * and devices that take time to follow their setpoints.
 */

import assert from "node:assert/strict";
import {
  bunchLengthPs,
  energyLossMeV,
  rigidityTm,
  ringLifetime,
  undulatorFieldT,
} from "../../../src/facility/ring.ts";
import type { Simulator } from "../../../src/adapters/simulator/mod.ts";
import { readNumber, simAt } from "./helpers.ts";

const STATIONS = ["01", "02", "03", "04"].map((n) => `RF:STN:${n}:VOLT:SETPT`);

async function severity(sim: Simulator, name: string): Promise<string | undefined> {
  return (await sim.read([name]))[0]?.severity;
}

Deno.test("the energy loss per turn is 88.5 keV·E⁴/ρ and the RF covers it", async () => {
  const { sim } = simAt();
  const ring = sim.model.ring;
  assert.ok(ring);
  const u0 = energyLossMeV(ring);
  assert.ok(Math.abs(u0 - (88.5e-3 * (ring.energyMeV / 1000) ** 4) / ring.bendRadiusM) < 1e-12);
  assert.ok(Math.abs((await readNumber(sim, "RING:ENERGY")) - ring.energyMeV) < 0.05);
  let volt = 0;
  for (const n of ["01", "02", "03", "04"]) volt += await readNumber(sim, `RF:STN:${n}:CAV:VOLT`);
  assert.ok(volt / 1000 > 2 * u0, `${volt} kV against U0 = ${u0} MeV`);
  // Forward power: wall loss V²/2Rs plus this cavity's share of the beam power I·U0.
  const current = await readNumber(sim, "RING:DCCT:CURRENT");
  const v1 = await readNumber(sim, "RF:STN:01:CAV:VOLT");
  const p1 = await readNumber(sim, "RF:STN:01:FWD:PWR");
  const expected = (v1 * v1) / (2 * ring.shuntImpedanceMOhm * 1000) + current * u0 * (v1 / volt);
  assert.ok(Math.abs(p1 - expected) < 5, `forward power ${p1} kW, formula ${expected} kW`);
  // Bunch length σt = α·σδ/(2π·νs·frev) at this voltage, within the drift of the streak camera.
  const sigma = bunchLengthPs(ring, volt / 1000);
  assert.ok(Math.abs((await readNumber(sim, "DIAG:BUNCH:LENGTH")) - sigma) < 1.5);
});

Deno.test("the lifetime reading is the τ of 1/τ = 1/τ_gas + 1/τ_Touschek and it drives the decay", async () => {
  const { sim, clock } = simAt();
  const ring = sim.model.ring;
  assert.ok(ring);
  const tauNow = await readNumber(sim, "RING:LIFETIME");
  const i0 = await readNumber(sim, "RING:DCCT:CURRENT");
  const parts = ringLifetime(ring, {
    currentMA: i0,
    pressureRatio: 1,
    voltMV: 2.4,
    apertureSigma: [Infinity, Infinity],
    acceptanceRatio: 1,
    physicalAcceptance: Infinity,
  });
  // Pressure wanders by a few per cent around its reference.
  assert.ok(
    Math.abs(tauNow - parts.totalH) / parts.totalH < 0.1,
    `${tauNow} h vs ${parts.totalH} h`,
  );
  assert.ok(Math.abs(1 / parts.totalH - 1 / parts.gasH - 1 / parts.touschekH) < 1e-6);

  // Injection off: the current decays as e^(−t/τ) and is not topped up.
  await sim.write("TIMING:INJ:ENABLE", "DISABLED");
  assert.equal(await severity(sim, "DIAG:INJ:EFF"), "INVALID", "no shots, no efficiency");
  // I(t) = I₀·exp(−∫dt/τ), with τ the lifetime read every minute (incidents included).
  const start = await readNumber(sim, "RING:DCCT:CURRENT");
  const tauStart = await readNumber(sim, "RING:LIFETIME");
  let exponent = 0;
  let tau = tauStart;
  for (let minute = 0; minute < 60; minute++) {
    clock.advance(60_000);
    const next = await readNumber(sim, "RING:LIFETIME");
    exponent += (1 / 60) * (1 / tau + 1 / next) / 2;
    tau = next;
  }
  const end = await readNumber(sim, "RING:DCCT:CURRENT");
  const expected = start * Math.exp(-exponent);
  assert.ok(Math.abs(end - expected) < 0.005 * start, `after 1 h: ${end} mA, expected ${expected}`);
  assert.ok(end < start * Math.exp(-1 / 20), "and it decays: no top-up");

  // Injection back on: top-up refills to the target at the next interval.
  await sim.write("TIMING:INJ:ENABLE", "ENABLED");
  clock.advance(10 * 60_000);
  assert.ok(Math.abs((await readNumber(sim, "RING:DCCT:CURRENT")) - ring.targetMA) < 2);
});

Deno.test("RF voltage below the energy loss per turn loses the beam: BPMs, tune and photon BPMs go INVALID", async () => {
  const { sim, clock } = simAt();
  const u0 = energyLossMeV(sim.model.facility.spec.ring);
  const circumference = sim.model.ring?.circumferenceM ?? 0;
  const per = (0.9 * u0 * 1000) / 4; // 90 % of U0 in total
  for (const s of STATIONS) await sim.write(s, per);
  assert.equal(await severity(sim, "RING:BPM:10:X"), "NONE", "the voltage takes seconds to fall");
  clock.advance(30_000);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05, "beam lost");
  for (
    const d of ["RING:BPM:10:X", "RING:BPM:33:Y", "RING:TUNE:X", "RING:TUNE:Y", "BL:05:XBPM:X"]
  ) {
    const [r] = await sim.read([d]);
    assert.equal(r?.severity, "INVALID", d);
    assert.equal(r?.status, "NO_BEAM", d);
  }
  assert.equal(await readNumber(sim, "RING:LIFETIME"), 0);
  assert.equal(await readNumber(sim, "DIAG:INJ:EFF"), 0, "nothing can be stored");
  // Top-up cannot refill while the voltage stays low.
  clock.advance(5 * 60_000);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05);
  // Restored, the ring refills at rate × charge × efficiency / T0.
  for (const s of STATIONS) await sim.write(s, 600);
  clock.advance(60_000);
  const a = await readNumber(sim, "RING:DCCT:CURRENT");
  clock.advance(20_000);
  const b = await readNumber(sim, "RING:DCCT:CURRENT");
  const rate = await readNumber(sim, "TIMING:REP:RATE");
  const charge = await readNumber(sim, "LINAC:GUN:CHARGE");
  const eff = (await readNumber(sim, "DIAG:INJ:EFF")) / 100;
  const fill = (rate * charge * eff) / ((circumference / 299_792_458) * 1e6);
  assert.ok(Math.abs((b - a) / 20 - fill) < 0.05 * fill, `fill ${(b - a) / 20} mA/s vs ${fill}`);
});

Deno.test("a closed orbit beyond the aperture loses the beam, and the loss shows at the monitor nearby", async () => {
  const { sim, clock } = simAt();
  // Push the whole vertical orbit with every corrector near its native limit.
  const bpm = "RING:BPM:20:Y";
  const writes: [string, number][] = [];
  for (let i = 1; i <= 40; i++) {
    const cor = `RING:COR:V${String(i).padStart(2, "0")}:SETPT`;
    const r = sim.responseCoefficient(bpm, cor);
    writes.push([cor, Math.sign(r) * 2.5]);
  }
  for (const [cor, v] of writes) await sim.write(cor, v);
  // The correctors ramp at 0.5 mrad/s: the orbit reaches the aperture within seconds.
  let lost = false;
  for (let second = 0; second < 20 && !lost; second++) {
    clock.advance(1_000);
    lost = (await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05;
  }
  assert.ok(lost, "beam lost at the aperture");
  const losses = (await sim.read(
    Array.from({ length: 120 }, (_, i) => `RING:BLM:${String(i + 1).padStart(3, "0")}:LOSS`),
  )).map((r) => Number(r.value));
  const peak = Math.max(...losses);
  assert.ok(peak > 2000, `a loss burst (${peak} cts/s)`);
  assert.ok(losses.filter((l) => l > 2000).length <= 2, "in one place, not everywhere");
});

Deno.test("walking the tune onto the half-integer loses the beam", async () => {
  const { sim, clock } = simAt();
  const nu = await readNumber(sim, "RING:TUNE:X");
  const q = sim.model.optics.quads.find((t) => t.magnet.name === "RING:Q1:CURRENT");
  assert.ok(q);
  const i0 = Number(sim.model.initial.get("RING:Q1:CURRENT"));
  const perAmp = (q.weight[0] * q.strength) / i0;
  const current = await readNumber(sim, "RING:Q1:CURRENT");
  await sim.write("RING:Q1:CURRENT", current + (0.5 - nu) / perAmp);
  clock.advance(120_000);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05);
  assert.equal(await severity(sim, "RING:TUNE:X"), "INVALID");
});

Deno.test("a readback follows its setpoint with a ramp and a calibration offset, never the same value at once", async () => {
  const { sim, clock } = simAt();
  const before = await readNumber(sim, "RING:Q5:RDBK");
  const set = await readNumber(sim, "RING:Q5:CURRENT");
  await sim.write("RING:Q5:CURRENT", set + 10); // 2 A/s: 5 s to settle
  const now = await readNumber(sim, "RING:Q5:RDBK");
  assert.ok(Math.abs(now - before) < 0.05, "the supply has not moved in the same millisecond");
  clock.advance(2_500);
  const half = await readNumber(sim, "RING:Q5:RDBK");
  assert.ok(Math.abs(half - (set + 5)) < 0.05, `half way after 2.5 s: ${half}`);
  clock.advance(5_000);
  const done = await readNumber(sim, "RING:Q5:RDBK");
  assert.ok(Math.abs(done - (set + 10)) < 0.02, `settled: ${done}`);
  assert.notEqual(done, set + 10);
  // The power-supply temperature relaxes with a 10-minute time constant.
  const cor = "LINAC:COR:H02";
  const t0 = await readNumber(sim, `${cor}:PS:TEMP`);
  await sim.write(`${cor}:SETPT`, 4.5);
  clock.advance(60_000);
  const t1 = await readNumber(sim, `${cor}:PS:TEMP`);
  clock.advance(60 * 60_000);
  const t2 = await readNumber(sim, `${cor}:PS:TEMP`);
  assert.ok(t2 - t0 > 5, `warms by several degrees (${t0} → ${t2})`);
  const rise = 1 - Math.exp(-60 / 600);
  assert.ok(Math.abs((t1 - t0) / (t2 - t0) - rise) < 0.1, `after 1 min: ${(t1 - t0) / (t2 - t0)}`);
});

Deno.test("an undulator gap moves at 1 mm/s, reads MOVING meanwhile, and shifts the vertical tune", async () => {
  const { sim, clock } = simAt();
  const gap0 = await readNumber(sim, "ID:03:GAP:SETPT");
  const nuY = await readNumber(sim, "RING:TUNE:Y");
  const orbit = await readNumber(sim, "RING:BPM:30:Y");
  const target = 12;
  await sim.write("ID:03:GAP:SETPT", target);
  clock.advance(1_000);
  assert.equal((await sim.read(["ID:03:STATUS"]))[0]?.value, "MOVING");
  assert.ok(Math.abs((await readNumber(sim, "ID:03:GAP:RDBK")) - (gap0 - 1)) < 0.01);
  clock.advance(Math.ceil(Math.abs(gap0 - target)) * 1000);
  assert.equal((await sim.read(["ID:03:STATUS"]))[0]?.value, "IDLE");
  assert.ok(Math.abs((await readNumber(sim, "ID:03:GAP:RDBK")) - target) < 0.005);
  const ring = sim.model.facility.spec.ring;
  const at = sim.model.optics.lattice.points.get("ID:03");
  assert.ok(at);
  const focus = (g: number) =>
    ((at.beta[1] ?? 0) * ring.idLengthM *
      (undulatorFieldT(g, ring.idPeriodMm) / rigidityTm(ring.energyMeV)) ** 2) / (8 * Math.PI);
  const expected = focus(target) - focus(gap0);
  const shift = (await readNumber(sim, "RING:TUNE:Y")) - nuY;
  assert.ok(Math.abs(shift - expected) < 0.001, `Δν_y ${shift} vs β·L·(B/Bρ)²/8π ${expected}`);
  assert.ok(expected > 0.001, "closing the gap focuses vertically");
  assert.ok(
    Math.abs((await readNumber(sim, "RING:BPM:30:Y")) - orbit) > 0.001,
    "and kicks the orbit",
  );
});

Deno.test("a screen in the beam or a mistuned injection kicker stops the fill, not the stored beam", async () => {
  const { sim, clock } = simAt();
  const eff = await readNumber(sim, "DIAG:INJ:EFF");
  assert.ok(eff > 50);
  const kick = await readNumber(sim, "BTS:KICKER:02:VOLT:SETPT");
  await sim.write("BTS:KICKER:02:VOLT:SETPT", kick * 1.03); // 3 %: one tolerance width
  clock.advance(5_000);
  const mistuned = await readNumber(sim, "DIAG:INJ:EFF");
  assert.ok(Math.abs(mistuned / eff - Math.exp(-1)) < 0.05, `${mistuned} vs ${eff}·e⁻¹`);
  await sim.write("DIAG:SCREEN:03:POS", "IN");
  assert.ok((await readNumber(sim, "DIAG:INJ:EFF")) < 1.5, "only the monitor's noise is left");
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) > 250, "the stored beam stays");
});
