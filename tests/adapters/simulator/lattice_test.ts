/**
 * The simulated machine against the formulas of accelerator physics: each
 * test takes the optics the code holds (β, ψ, η, E along s) and checks what
 * the devices read against the textbook relation, not against stored numbers.
 */

import assert from "node:assert/strict";
import type { Simulator } from "../../../src/adapters/simulator/mod.ts";
import type { LatticePoint } from "../../../src/facility/lattice.ts";
import { readNumber, simAt } from "./helpers.ts";

const NOISE_MM = 0.035;

function point(sim: Simulator, prefix: string): LatticePoint {
  const at = sim.model.optics.lattice.points.get(prefix);
  if (at === undefined) throw new Error(`${prefix} is not in the lattice`);
  return at;
}

async function readAll(sim: Simulator, names: string[]): Promise<number[]> {
  return (await sim.read(names)).map((r) => (typeof r.value === "number" ? r.value : NaN));
}

const ringBpms = (plane: "X" | "Y") =>
  Array.from({ length: 60 }, (_, i) => `RING:BPM:${String(i + 1).padStart(2, "0")}:${plane}`);

Deno.test("the ring's phase advance ∫ds/β over one turn is 2π times the tune it reads", async () => {
  const { sim } = simAt();
  const ring = sim.model.optics.lattice.sections.get("RING");
  assert.ok(ring);
  const n = 200_000;
  const h = ring.spec.lengthM / n;
  for (const [plane, device] of [[0, "RING:TUNE:X"], [1, "RING:TUNE:Y"]] as const) {
    let integral = 0;
    for (let i = 0; i < n; i++) integral += h / (ring.at((i + 0.5) * h).beta[plane] ?? 1);
    const nu = integral / (2 * Math.PI);
    const reading = await readNumber(sim, device);
    assert.ok(
      Math.abs((nu % 1) - reading) < 0.002,
      `${device}: ∫ds/β/2π = ${nu}, reads ${reading}`,
    );
    // The phase the code holds at any point is the same integral.
    const s = 123.4;
    let partial = 0;
    const m = 50_000;
    for (let i = 0; i < m; i++) {
      partial += (s / m) / (ring.at(((i + 0.5) * s) / m).beta[plane] ?? 1);
    }
    assert.ok(Math.abs(partial - (ring.at(s).phase[plane] ?? 0)) < 3e-4);
  }
});

Deno.test("a ring corrector moves the closed orbit by √(βᵢβⱼ)/(2 sin πν)·cos(|ψᵢ−ψⱼ|−πν)·θ − ηᵢηⱼθ/(α_c·C) at the live tune", async () => {
  const { sim, clock } = simAt();
  // Change the tune first (Q5 up 6 A), so the response must use the live tune, not the design one.
  const q5 = await readNumber(sim, "RING:Q5:CURRENT");
  await sim.write("RING:Q5:CURRENT", q5 + 6);
  clock.advance(10_000);
  const nu = 14 + await readNumber(sim, "RING:TUNE:X");
  assert.ok(Math.abs(nu - 14.23) > 0.03, `the tune moved (${nu})`);
  const bpms = ringBpms("X");
  const before = await readAll(sim, bpms);
  const theta = await readNumber(sim, "RING:COR:H07:SETPT");
  const dTheta = 0.08;
  await sim.write("RING:COR:H07:SETPT", theta + dTheta);
  clock.advance(2_000);
  const after = await readAll(sim, bpms);
  const j = point(sim, "RING:COR:H07");
  const ringParams = sim.model.ring;
  assert.ok(ringParams);
  const q = sim.model.optics.quads.find((f) => f.magnet.name === "RING:Q5:CURRENT");
  assert.ok(q);
  const dkl = (q.strength * 6 / Number(sim.model.initial.get("RING:Q5:CURRENT"))) * q.lengthM;
  const response = (a: LatticePoint, b: LatticePoint) => {
    const d = (Math.abs((a.phase[0] ?? 0) - (b.phase[0] ?? 0)) / (2 * Math.PI * 14.23)) * 2 *
      Math.PI * nu;
    return Math.sqrt((a.beta[0] ?? 0) * (b.beta[0] ?? 0)) / (2 * Math.sin(Math.PI * nu)) *
        Math.cos(d - Math.PI * nu) -
      (a.eta * b.eta) / (ringParams.alphaC * ringParams.circumferenceM);
  };
  const total = 2 * Math.PI * 14.23;
  bpms.forEach((bpm, k) => {
    const i = point(sim, bpm.replace(/:X$/, ""));
    const dpsi = (Math.abs((i.phase[0] ?? 0) - (j.phase[0] ?? 0)) / total) * 2 * Math.PI * nu;
    // The kick also lengthens the orbit: at fixed RF frequency the energy follows, −ηᵢηⱼ/(α_c·C).
    const ring = sim.model.ring;
    assert.ok(ring);
    const r = Math.sqrt((i.beta[0] ?? 0) * (j.beta[0] ?? 0)) / (2 * Math.sin(Math.PI * nu)) *
        Math.cos(dpsi - Math.PI * nu) - (i.eta * j.eta) / (ring.alphaC * ring.circumferenceM);
    // The family that moved (ΔK·L) kicks the corrector's orbit where its magnets are, to first
    // order: Σ R(i,m)·ΔK·L·R(m,j)·θ.
    let fed = 0;
    for (const m of q.points) fed += response(i, m) * dkl * response(m, j);
    const moved = (after[k] ?? 0) - (before[k] ?? 0);
    assert.ok(
      Math.abs(moved - (r + fed) * dTheta) < NOISE_MM,
      `${bpm}: ${moved} vs ${(r + fed) * dTheta}`,
    );
  });
});

Deno.test("a linac kick reaches the linac-to-booster line downstream, adiabatically damped, and nothing upstream", async () => {
  const { sim, clock } = simAt();
  const names = [
    ...Array.from({ length: 20 }, (_, i) => `LINAC:BPM:${String(i + 1).padStart(2, "0")}:X`),
    ...Array.from({ length: 4 }, (_, i) => `LTB:BPM:0${i + 1}:X`),
    ...Array.from({ length: 8 }, (_, i) => `BTS:BPM:0${i + 1}:X`),
  ];
  const before = await readAll(sim, names);
  const theta = await readNumber(sim, "LINAC:COR:H04:SETPT");
  await sim.write("LINAC:COR:H04:SETPT", theta + 0.1);
  clock.advance(2_000);
  const after = await readAll(sim, names);
  const j = point(sim, "LINAC:COR:H04");
  let reached = 0;
  names.forEach((name, k) => {
    const moved = (after[k] ?? 0) - (before[k] ?? 0);
    if (name.startsWith("BTS")) {
      // The booster re-captures and damps the beam: the line after it does not see the kick.
      assert.ok(Math.abs(moved) < NOISE_MM, `${name} moved ${moved}`);
      return;
    }
    const i = point(sim, name.replace(/:X$/, ""));
    const expected = i.path <= j.path ? 0 : Math.sqrt(
      (i.beta[0] ?? 0) * (j.beta[0] ?? 0) * j.energyMeV / i.energyMeV,
    ) * Math.sin((i.phase[0] ?? 0) - (j.phase[0] ?? 0)) * 0.1;
    if (expected !== 0) reached++;
    assert.ok(Math.abs(moved - expected) < NOISE_MM, `${name}: ${moved} vs ${expected}`);
  });
  assert.ok(reached >= 15, "the kick reaches the rest of the linac and the LTB line");
  assert.ok(point(sim, "LINAC:COR:H04").energyMeV < point(sim, "LTB:BPM:01").energyMeV / 3);
});

Deno.test("an energy change shows as η·δ in the transfer lines: the linac's in LTB, the booster's in BTS", async () => {
  const { sim, clock } = simAt();
  const ltb = ["LTB:BPM:01:X", "LTB:BPM:02:X", "LTB:BPM:03:X", "LTB:BPM:04:X"];
  const bts = Array.from({ length: 8 }, (_, i) => `BTS:BPM:0${i + 1}:X`);
  const e0 = await readNumber(sim, "DIAG:ENERGY:MEAS");
  const before = await readAll(sim, ltb);
  await sim.write("RF:AMPL:SETPT", 99.5); // E ∝ amplitude: δ = −0.5 %
  clock.advance(5_000);
  const e1 = await readNumber(sim, "DIAG:ENERGY:MEAS");
  const delta = 99.5 / 100 - 1;
  assert.ok(Math.abs(e1 / e0 - 1 - delta) < 0.0005, `the energy reads δ = ${e1 / e0 - 1}`);
  const after = await readAll(sim, ltb);
  ltb.forEach((name, k) => {
    const eta = point(sim, name.replace(/:X$/, "")).eta;
    const moved = (after[k] ?? 0) - (before[k] ?? 0);
    assert.ok(Math.abs(moved - 1000 * eta * delta) < NOISE_MM + 0.002, `${name}: ${moved}`);
  });
  assert.ok(point(sim, "LTB:BPM:02").eta > 0.1, "the LTB line has dispersion");

  const btsBefore = await readAll(sim, bts);
  const i0 = await readNumber(sim, "BOOSTER:DIPOLE:CURRENT");
  const eb0 = await readNumber(sim, "BOOSTER:ENERGY");
  await sim.write("BOOSTER:DIPOLE:CURRENT", i0 * 1.002);
  clock.advance(10_000);
  const eb1 = await readNumber(sim, "BOOSTER:ENERGY");
  assert.ok(Math.abs(eb1 / eb0 - 1.002) < 1e-5, "the booster energy follows its dipole (E ∝ B)");
  const btsAfter = await readAll(sim, bts);
  bts.forEach((name, k) => {
    const eta = point(sim, name.replace(/:X$/, "")).eta;
    const moved = (btsAfter[k] ?? 0) - (btsBefore[k] ?? 0);
    assert.ok(Math.abs(moved - 1000 * eta * 0.002) < NOISE_MM, `${name}: ${moved}`);
  });
});

Deno.test("one quadrupole-family step shifts the tunes by ±Σβ·ΔK·L/4π", async () => {
  const { sim, clock } = simAt();
  for (const q of sim.model.optics.quads) {
    const name = q.magnet.name;
    const [nx, ny] = await readAll(sim, ["RING:TUNE:X", "RING:TUNE:Y"]);
    const i0 = Number(sim.model.initial.get(name));
    const current = await readNumber(sim, name);
    await sim.write(name, current + 0.5);
    clock.advance(5_000);
    const [mx, my] = await readAll(sim, ["RING:TUNE:X", "RING:TUNE:Y"]);
    const dk = (q.strength * 0.5) / i0; // K ∝ I
    let sx = 0;
    let sy = 0;
    for (const at of q.points) {
      sx += at.beta[0] ?? 0;
      sy += at.beta[1] ?? 0;
    }
    assert.equal(q.points.length, 20, `${name}: one magnet per cell`);
    const ex = (sx * dk * q.lengthM) / (4 * Math.PI);
    const ey = (-sy * dk * q.lengthM) / (4 * Math.PI);
    // Tune readings carry 2·10⁻⁴ of noise.
    assert.ok(
      Math.abs((mx ?? 0) - (nx ?? 0) - ex) < 0.001,
      `${name} x: ${(mx ?? 0) - (nx ?? 0)} vs ${ex}`,
    );
    assert.ok(
      Math.abs((my ?? 0) - (ny ?? 0) - ey) < 0.001,
      `${name} y: ${(my ?? 0) - (ny ?? 0)} vs ${ey}`,
    );
  }
});

Deno.test("a transfer-line corrector moves the BTS BPMs downstream by √(βᵢβⱼ)·sin(ψᵢ−ψⱼ)·θ", async () => {
  const { sim, clock } = simAt();
  const names = Array.from({ length: 8 }, (_, i) => `BTS:BPM:0${i + 1}:Y`);
  const before = await readAll(sim, names);
  const theta = await readNumber(sim, "BTS:COR:V03:SETPT");
  await sim.write("BTS:COR:V03:SETPT", theta - 0.12);
  clock.advance(2_000);
  const after = await readAll(sim, names);
  const j = point(sim, "BTS:COR:V03");
  names.forEach((name, k) => {
    const i = point(sim, name.replace(/:Y$/, ""));
    const expected = i.s <= j.s ? 0 : Math.sqrt((i.beta[1] ?? 0) * (j.beta[1] ?? 0)) *
      Math.sin((i.phase[1] ?? 0) - (j.phase[1] ?? 0)) * -0.12;
    const moved = (after[k] ?? 0) - (before[k] ?? 0);
    assert.ok(Math.abs(moved - expected) < NOISE_MM, `${name}: ${moved} vs ${expected}`);
  });
});

Deno.test("the ring orbit drifts linearly with the tunnel temperature, by micrometres", () => {
  const { sim } = simAt();
  const model = sim.model;
  const sp = { at: (def: { name: string }) => model.initial.get(def.name) ?? 0 };
  const bpm = model.facility.byName.get("RING:BPM:07:X");
  const sensor = model.facility.byName.get("RING:TUNNEL:TEMP:018");
  assert.ok(bpm && sensor);
  const t0 = Date.parse("2025-03-04T04:00:00Z");
  const times = [t0, t0 + 6 * 3_600_000, t0 + 12 * 3_600_000];
  // The girders' part: what the BPM reads with the slow terms, less without them.
  const x = times.map((t) => model.bpmOrbit(bpm, t, sp) - model.bpmOrbit(bpm, t, sp, false));
  const temp = times.map((t) => model.level(sensor, t, sp));
  const dx1 = (x[1] ?? 0) - (x[0] ?? 0);
  const dx2 = (x[2] ?? 0) - (x[0] ?? 0);
  const dT1 = (temp[1] ?? 0) - (temp[0] ?? 0);
  const dT2 = (temp[2] ?? 0) - (temp[0] ?? 0);
  assert.ok(Math.abs(dT1) > 0.05, `the tunnel temperature moves (${dT1} K)`);
  assert.ok(Math.abs(dx1) > 1e-5 && Math.abs(dx1) < 0.02, `micrometres: ${dx1} mm`);
  assert.ok(Math.abs(dx2 / dx1 - dT2 / dT1) < 1e-6, "in proportion to ΔT");
});
