/**
 * An accelerator physicist's review of the simulated facility, written as
 * checks against the model's own numbers: each test takes one relation a
 * physicist would measure (linear optics, radiation integrals, closed orbit,
 * the RF bucket, lifetimes and top-up, the injector, incidents, the grown
 * facility) and compares the model's outputs with the textbook formula or
 * with another of its outputs. docs/facility-review.md lists the checks and
 * what they found.
 */

import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import { createSimulator, type Simulator } from "../../src/adapters/simulator/mod.ts";
import type { LatticePoint } from "../../src/facility/lattice.ts";
import { ringResponse } from "../../src/facility/optics.ts";
import {
  bunchLengthPs,
  C_LIGHT,
  C_Q,
  energyLossMeV,
  gamma,
  quantumLifetimeS,
  rfAcceptance,
  rfFrequencyMHz,
  rigidityTm,
  ringLifetime,
  type RingParams,
  synchrotronTune,
  undulatorFieldT,
} from "../../src/facility/ring.ts";
import { buildRingOptics, type RingOptics } from "../../src/facility/ring_lattice.ts";

const T0 = Date.parse("2025-03-04T08:00:00Z");
const MIN = 60_000;
/** Classical radiation constant C_γ = 4π/3·r_e/(mc²)³, m/GeV³. */
const C_GAMMA = 8.846e-5;

function simAt(seed = 1, devices?: number): { sim: Simulator; clock: ManualClock } {
  const clock = new ManualClock(T0);
  return { sim: createSimulator({ seed, clock, ...(devices ? { devices } : {}) }), clock };
}

const { sim: base } = simAt();
const ring = base.model.ring as RingParams;
const lattice = base.model.optics.ring?.ring as RingOptics;
const C = ring.circumferenceM;
const rho = ring.bendRadiusM;
const E = ring.energyMeV;
const U0 = energyLossMeV(ring);
const h = ring.harmonic;

/** The live setpoints behind a simulator, for evaluating the model without noise. */
function state(sim: Simulator) {
  return (sim as unknown as { setpoints: Parameters<Simulator["model"]["value"]>[2] }).setpoints;
}

async function num(sim: Simulator, name: string): Promise<number> {
  const [r] = await sim.read([name]);
  if (r === undefined || typeof r.value !== "number") {
    throw new Error(`${name} did not read as a number: ${JSON.stringify(r)}`);
  }
  return r.value;
}

async function nums(sim: Simulator, names: string[]): Promise<number[]> {
  return (await sim.read(names)).map((r) => Number(r.value));
}

function close(actual: number, expected: number, rel: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= rel * Math.abs(expected),
    `${what}: ${actual} against ${expected} (±${rel * 100}%)`,
  );
}

/** Midpoint integral of f over the ring on n steps. */
function integrate(f: (s: number) => number, n = 100_000): number {
  const step = C / n;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += f((i + 0.5) * step) * step;
  return sum;
}

const cell = lattice.cellLengthM;
const dipoles = base.facility.spec.optics["RING"]?.cell?.dipolesAtM ?? [];
const dipoleLength = (rho * 2 * Math.PI) / (lattice.cells * dipoles.length);
function inDipole(s: number): boolean {
  const u = ((s % cell) + cell) % cell;
  return dipoles.some((c) => Math.abs(u - c) < dipoleLength / 2);
}

/** A ring lattice point at s, for the response formulas. */
function ringPoint(s: number): LatticePoint {
  const p = lattice.at(s);
  return { section: "RING", s, path: s, energyMeV: E, ...p };
}

const pad = (n: number) => String(n).padStart(2, "0");

// ---------------------------------------------------------------- linear optics

Deno.test("optics: the phase advance over one turn is 2π times each tune", () => {
  for (const plane of [0, 1] as const) {
    const turn = lattice.at(C - 1e-9).phase[plane] - lattice.at(0).phase[plane];
    close(turn / (2 * Math.PI), lattice.tunes[plane], 1e-6, `plane ${plane}`);
    close(
      integrate((s) => 1 / lattice.at(s).beta[plane]) / (2 * Math.PI),
      lattice.tunes[plane],
      2e-4,
      "∮ds/β",
    );
  }
});

Deno.test("optics: α = −β'/2 along the ring", () => {
  for (const s of [0.7, 3.0, 8.0, 13.9, 100.3]) {
    for (const plane of [0, 1] as const) {
      const d = 1e-3;
      const slope = (lattice.at(s + d).beta[plane] - lattice.at(s - d).beta[plane]) / (2 * d);
      assert.ok(Math.abs(-slope / 2 - lattice.at(s).alpha[plane]) < 0.02, `α at ${s}`);
    }
  }
});

Deno.test("optics: the read tunes are the lattice's fractional tunes", async () => {
  const [x, y] = await nums(base, ["RING:TUNE:X", "RING:TUNE:Y"]);
  assert.ok(Math.abs((x ?? 0) - (lattice.tunes[0] % 1)) < 0.002, `${x}`);
  assert.ok(Math.abs((y ?? 0) - (lattice.tunes[1] % 1)) < 0.002, `${y}`);
});

Deno.test("optics: dispersion is positive through every dipole of a normal lattice", () => {
  for (let s = 0; s < cell; s += 0.05) {
    if (inDipole(s)) assert.ok(lattice.at(s).eta > 0, `η at ${s}`);
  }
});

Deno.test("optics: momentum compaction is (1/C)∮η/ρ ds and of the smooth-ring size 1/ν_x²", () => {
  const alpha = integrate((s) => (inDipole(s) ? lattice.at(s).eta / rho : 0)) / C;
  close(alpha, ring.alphaC, 0.005, "α_c");
  const smooth = 1 / lattice.tunes[0] ** 2;
  assert.ok(
    ring.alphaC > 0.5 * smooth && ring.alphaC < 2 * smooth,
    `α_c ${ring.alphaC} vs 1/ν² ${smooth}`,
  );
});

Deno.test("optics: natural chromaticity is negative and of the size of the tunes", () => {
  for (const plane of [0, 1] as const) {
    const ratio = lattice.naturalChromaticity[plane] / lattice.tunes[plane];
    assert.ok(ratio < -0.8 && ratio > -2, `ξ₀/ν = ${ratio}`);
  }
});

Deno.test("optics: the sextupoles bring the chromaticity to the set values, and it reads so", async () => {
  const xi = [0, 0];
  for (const s of lattice.sextupoles) {
    xi[0] = (xi[0] ?? 0) + (s.beta[0] * s.eta * s.strength) / (4 * Math.PI);
    xi[1] = (xi[1] ?? 0) - (s.beta[1] * s.eta * s.strength) / (4 * Math.PI);
  }
  const set = base.facility.spec.optics["RING"]?.cell?.chromaticity ?? [];
  for (const plane of [0, 1] as const) {
    close(
      lattice.naturalChromaticity[plane] + (xi[plane] ?? 0) * lattice.cells,
      set[plane] ?? 0,
      1e-6,
      "ξ",
    );
  }
  const [cx, cy] = await nums(base, ["RING:CHROM:X", "RING:CHROM:Y"]);
  assert.ok(Math.abs((cx ?? 0) - (set[0] ?? 0)) < 0.3 && Math.abs((cy ?? 0) - (set[1] ?? 0)) < 0.3);
});

Deno.test("optics: a quadrupole-family change moves the tunes by ±Σβ·ΔK·L/4π, as the rebuilt lattice gives", () => {
  const spec = base.facility.spec.optics["RING"]?.cell;
  assert.ok(spec);
  const k = new Map(lattice.quads.map((q) => [q.family, q.strength]));
  const fixed = {
    ...spec,
    quads: spec.quads.map((q) => ({ ...q, k1: k.get(q.family), match: undefined })),
  };
  const dk = 0.01;
  const moved = {
    ...fixed,
    quads: fixed.quads.map((q) => (q.family === "RING:Q3" ? { ...q, k1: (q.k1 ?? 0) + dk } : q)),
  };
  const a = buildRingOptics(fixed, lattice.tunes, rho, { match: false });
  const b = buildRingOptics(moved, lattice.tunes, rho, { match: false });
  const q3 = lattice.quads.filter((q) => q.family === "RING:Q3");
  for (const plane of [0, 1] as const) {
    const sign = plane === 0 ? 1 : -1;
    const predicted = sign * q3.reduce((s, q) => s + q.beta[plane] * dk * q.lengthM, 0) *
      lattice.cells / (4 * Math.PI);
    close(b.tunes[plane] - a.tunes[plane], predicted, 0.05, `plane ${plane}`);
  }
});

Deno.test("optics: the RF frequency is h·c/C and the master oscillator reads it", async () => {
  close(rfFrequencyMHz(ring), (h * C_LIGHT) / C / 1e6, 1e-12, "f_RF");
  assert.ok(Math.abs((await num(base, "RF:MO:FREQ")) - rfFrequencyMHz(ring)) < 1e-5);
});

// ---------------------------------------------------------------- radiation integrals

Deno.test("radiation: I2 = 2π/ρ and I3 = 2π/ρ² for an isomagnetic ring", () => {
  close(lattice.radiation.i2, (2 * Math.PI) / rho, 1e-3, "I2");
  close(lattice.radiation.i3, (2 * Math.PI) / rho ** 2, 1e-3, "I3");
  close(lattice.radiation.i1, ring.alphaC * C, 1e-9, "I1 = α_c·C");
});

Deno.test("radiation: U₀ = C_γ/2π·E⁴·I2 is the 88.5 keV·E⁴/ρ the model uses", () => {
  const fromI2 = (C_GAMMA / (2 * Math.PI)) * (E / 1000) ** 4 * lattice.radiation.i2 * 1000;
  close(U0, fromI2, 2e-3, "U₀ (MeV)");
});

Deno.test("radiation: Robinson's theorem, J_x + J_y + J_E = 4", () => {
  close(ring.partition[0] + ring.partition[1] + ring.partition[2], 4, 1e-12, "ΣJ");
  assert.ok(ring.partition[0] > 0, "horizontally damped");
});

Deno.test("radiation: damping times are 2E·T₀/(J·U₀) and τ_E ≈ τ_x/2", () => {
  const t0 = C / C_LIGHT;
  ring.partition.forEach((j, i) =>
    close(ring.dampingMs[i] ?? 0, (2 * E * t0 * 1000) / (j * U0), 1e-9, `τ${i}`)
  );
  close(
    ring.dampingMs[2] * 2 * ring.partition[2] / ring.partition[0],
    ring.dampingMs[0] * 2,
    1e-9,
    "τ_E·J_E = τ_x·J_x",
  );
});

Deno.test("radiation: energy spread σ_δ² = C_q·γ²·I3/(J_E·I2)", () => {
  const r = lattice.radiation;
  const je = 2 + r.i4 / r.i2;
  close(ring.energySpread, Math.sqrt((C_Q * gamma(E) ** 2 * r.i3) / (je * r.i2)), 1e-9, "σ_δ");
  assert.ok(ring.energySpread > 5e-4 && ring.energySpread < 1.5e-3, "a 3 GeV ring's size");
});

Deno.test("radiation: emittance ε_x = C_q·γ²·I5/(J_x·I2), ε_y = κ·ε_x, and the pinhole camera reads them", async () => {
  const r = lattice.radiation;
  const ex = ((C_Q * gamma(E) ** 2 * r.i5) / ((1 - r.i4 / r.i2) * r.i2)) * 1e9;
  close(ring.emittanceNm[0], ex, 1e-9, "ε_x");
  close(ring.emittanceNm[1], ring.coupling * ex, 1e-9, "ε_y");
  const [mx, my] = await nums(base, ["DIAG:EMIT:X", "DIAG:EMIT:Y"]);
  close(mx ?? 0, ex, 0.05, "EMIT:X");
  close(my ?? 0, ring.coupling * ex, 0.1, "EMIT:Y");
});

Deno.test("radiation: I5 is ∮H/ρ³ with H = γη² + 2αηη' + βη'²", () => {
  const i5 = integrate((s) => {
    if (!inDipole(s)) return 0;
    const p = lattice.at(s);
    const g = (1 + p.alpha[0] ** 2) / p.beta[0];
    return (g * p.eta ** 2 + 2 * p.alpha[0] * p.eta * p.etaPrime + p.beta[0] * p.etaPrime ** 2) /
      rho ** 3;
  });
  close(lattice.radiation.i5, i5, 0.01, "I5");
});

// ---------------------------------------------------------------- closed orbit

Deno.test("orbit: the response at BPM i to corrector j is √(βiβj)cos(|φi−φj|−πν)/(2 sin πν) − ηiηj/(α_c·C)", () => {
  const sp = state(base);
  const t = T0;
  for (
    const [bpm, cor, plane] of [["RING:BPM:07:X", "RING:COR:H03", 0], [
      "RING:BPM:44:X",
      "RING:COR:H21",
      0,
    ], ["RING:BPM:12:Y", "RING:COR:V30", 1]] as const
  ) {
    const b = base.facility.byName.get(bpm);
    const c = base.facility.byName.get(`${cor}:SETPT`);
    assert.ok(b && c, `${bpm} ${cor}`);
    const i = base.model.optics.lattice.of(b);
    const j = base.model.optics.lattice.points.get(cor);
    assert.ok(i && j);
    const nu = lattice.tunes[plane];
    const dphi = Math.abs(i.phase[plane] - j.phase[plane]);
    let expected = (Math.sqrt(i.beta[plane] * j.beta[plane]) * Math.cos(dphi - Math.PI * nu)) /
      (2 * Math.sin(Math.PI * nu));
    if (plane === 0) expected -= (i.eta * j.eta) / (ring.alphaC * C);
    close(base.model.response(b, c, t, sp), expected, 1e-6, `${bpm} ← ${cor}`);
  }
});

Deno.test("orbit: a kick at fixed RF frequency leaves the path length unchanged, ∮x/ρ ds = 0 with the dispersion term", () => {
  const j = ringPoint(40.45);
  const plane = 0;
  const betatron = integrate((s) => {
    if (!inDipole(s)) return 0;
    const i = ringPoint(s);
    const r = ringResponse(i, j, plane, lattice.tunes[0], {
      alphaC: ring.alphaC,
      circumferenceM: C,
      tunes: lattice.tunes,
    });
    return r / rho;
  }, 40_000);
  // mm·m/mrad/m: in units of the kick's path lengthening η_j·θ it is zero.
  assert.ok(Math.abs(betatron) < 0.02 * j.eta, `∮x/ρ = ${betatron} against η_j = ${j.eta}`);
});

Deno.test("orbit: a positive horizontal kick moves the beam outward at the corrector and the response is reciprocal", async () => {
  const { sim, clock } = simAt();
  const before = await nums(sim, Array.from({ length: 60 }, (_, i) => `RING:BPM:${pad(i + 1)}:X`));
  const theta = await num(sim, "RING:COR:H07:SETPT");
  await sim.write("RING:COR:H07:SETPT", theta + 0.05);
  clock.advance(2_000);
  const after = await nums(sim, Array.from({ length: 60 }, (_, i) => `RING:BPM:${pad(i + 1)}:X`));
  const j = sim.model.optics.lattice.points.get("RING:COR:H07");
  assert.ok(j);
  // The BPM nearest the corrector (BPM 11 sits 0.05 m from H07 at 6.0 m of cell 4? pick the nearest by s).
  let nearest = 0;
  let best = Infinity;
  for (let k = 0; k < 60; k++) {
    const p = sim.model.optics.lattice.points.get(`RING:BPM:${pad(k + 1)}`);
    if (p && Math.abs(p.s - j.s) < best) [best, nearest] = [Math.abs(p.s - j.s), k];
  }
  const moved = (after[nearest] ?? 0) - (before[nearest] ?? 0);
  const cot = 1 / Math.tan(Math.PI * (lattice.tunes[0] % 1));
  assert.ok(Math.sign(moved) === Math.sign(cot) && Math.abs(moved) > 0.01, `moved ${moved} mm`);
  // Reciprocity of the betatron part: R_ij/√(βiβj) = R_ji/√(βjβi).
  const a = ringPoint(10.3);
  const b = ringPoint(150.1);
  const k = { alphaC: ring.alphaC, circumferenceM: C, tunes: lattice.tunes };
  close(
    ringResponse(a, b, 1, lattice.tunes[1], k),
    ringResponse(b, a, 1, lattice.tunes[1], k),
    1e-9,
    "R_ab = R_ba",
  );
});

Deno.test("orbit: raising the RF frequency lowers the energy by δ = −Δf/(f·α_c) and moves the beam inward where η > 0", async () => {
  const { sim, clock } = simAt();
  const f0 = await num(sim, "RF:MO:FREQ:SETPT");
  const x0 = await num(sim, "RING:BPM:02:X");
  const e0 = await num(sim, "RING:ENERGY");
  await sim.write("RF:MO:FREQ:SETPT", f0 + 0.001);
  clock.advance(20_000);
  const delta = -(0.001 / f0) / ring.alphaC;
  const e1 = await num(sim, "RING:ENERGY");
  close(e1 - e0, E * delta, 0.05, "ΔE");
  const at = sim.model.optics.lattice.points.get("RING:BPM:02");
  assert.ok(at && at.eta > 0.1);
  const dx = (await num(sim, "RING:BPM:02:X")) - x0;
  assert.ok(dx < 0, `inward: ${dx} mm`);
  close(dx, 1000 * at.eta * delta, 0.1, "η·δ");
});

// ---------------------------------------------------------------- longitudinal

/** Textbook RF bucket half-height: δ² = U₀/(π·h·α_c·E)·F(q), F(q) = 2(√(q²−1) − arccos(1/q)). */
function bucketHeight(voltMV: number): number {
  const q = voltMV / U0;
  const f = 2 * (Math.sqrt(q * q - 1) - Math.acos(1 / q));
  return Math.sqrt((U0 / (Math.PI * h * ring.alphaC * E)) * f);
}

Deno.test("longitudinal: the RF momentum acceptance is the bucket height √(U₀·F(q)/(π·h·α_c·E))", () => {
  for (const v of [1.5, 2.4, 3.2]) {
    close(rfAcceptance(ring, v), bucketHeight(v), 1e-9, `V = ${v} MV`);
  }
});

Deno.test("longitudinal: in a stationary bucket the height is 2ν_s/(h·α_c), from the model's own synchrotron tune", () => {
  // At V ≫ U₀ the bucket tends to the stationary one, δ = 2ν_s/(hα_c)·√(1 − arccos(1/q)/√(q²−1)).
  for (const v of [2.4, 20, 200]) {
    const q = v / U0;
    const nus = synchrotronTune(ring, v);
    const expected = ((2 * nus) / (h * ring.alphaC)) *
      Math.sqrt(1 - Math.acos(1 / q) / Math.sqrt(q * q - 1));
    close(rfAcceptance(ring, v), expected, 1e-6, `V = ${v} MV`);
  }
});

Deno.test("longitudinal: the synchrotron tune is √(h·α_c·V·cos φ_s/2πE) with sin φ_s = U₀/V", () => {
  for (const v of [1.2, 2.4, 3.0]) {
    const phis = Math.asin(U0 / v);
    close(
      synchrotronTune(ring, v),
      Math.sqrt((h * ring.alphaC * v * Math.cos(phis)) / (2 * Math.PI * E)),
      1e-9,
      `V ${v}`,
    );
  }
  assert.ok(synchrotronTune(ring, 2.4) > 0.003 && synchrotronTune(ring, 2.4) < 0.03);
});

Deno.test("longitudinal: bunch length σ_z = c·α_c·σ_δ/(2π·ν_s·f₀), and the streak camera reads it as V changes", async () => {
  const f0 = C_LIGHT / C;
  close(
    bunchLengthPs(ring, 2.4),
    ((ring.alphaC * ring.energySpread) / (2 * Math.PI * synchrotronTune(ring, 2.4) * f0)) * 1e12,
    1e-9,
    "σ_t",
  );
  const { sim, clock } = simAt();
  const read: number[] = [];
  for (const v of [450, 750]) {
    for (const s of [1, 2, 3, 4]) await sim.write(`RF:STN:0${s}:VOLT:SETPT`, v);
    clock.advance(10_000);
    read.push(await num(sim, "DIAG:BUNCH:LENGTH"));
  }
  // σ ∝ (V² − U₀²)^(−1/4).
  const expected = ((3.0 ** 2 - U0 ** 2) / (1.8 ** 2 - U0 ** 2)) ** 0.25;
  close((read[0] ?? 0) / (read[1] ?? 1), expected, 0.02, "σ(1.8 MV)/σ(3.0 MV)");
});

Deno.test("longitudinal: no RF bucket, no synchrotron motion, when V ≤ U₀", () => {
  assert.equal(rfAcceptance(ring, 0.99 * U0), 0);
  assert.equal(synchrotronTune(ring, 0.99 * U0), 0);
  assert.ok(rfAcceptance(ring, 1.01 * U0) > 0);
});

Deno.test("longitudinal: the stations' beam powers sum to I·U₀ whatever their phases", async () => {
  const { sim, clock } = simAt();
  await sim.write("RF:STN:02:PHASE:SETPT", 30);
  clock.advance(10_000);
  const sp = state(sim);
  const v = sim.model.rf.voltage(clock.now(), sp);
  const i = await num(sim, "RING:DCCT:CURRENT");
  let total = 0;
  for (const s of sim.model.rf.stations) total += sim.model.rf.beamPowerKW(s.volt, v, i, U0);
  close(total, i * U0, 1e-3, "ΣP_beam (kW)");
  // And the vector sum is |Σ V·e^{iφ}|.
  let re = 0;
  let im = 0;
  for (const s of v.stations) {
    [re, im] = [re + s.kv * Math.cos(s.dphi), im + s.kv * Math.sin(s.dphi)];
  }
  close(v.mv, Math.hypot(re, im) / 1000, 1e-12, "vector sum");
  assert.ok(v.mv < 2.4 - 0.01, "a station out of phase lowers the sum");
});

Deno.test("longitudinal: forward power is the wall loss V²/2R_s plus the beam's share", async () => {
  const [i, ...rest] = await nums(base, [
    "RING:DCCT:CURRENT",
    ...[1, 2, 3, 4].flatMap((n) => [`RF:STN:0${n}:CAV:VOLT`, `RF:STN:0${n}:FWD:PWR`]),
  ]);
  let fwd = 0;
  let wall = 0;
  for (let k = 0; k < 4; k++) {
    const v = rest[2 * k] ?? 0;
    wall += (v * v) / (2 * ring.shuntImpedanceMOhm * 1000);
    fwd += rest[2 * k + 1] ?? 0;
  }
  assert.ok(Math.abs(fwd - wall - (i ?? 0) * U0) < 12, `${fwd} kW = ${wall} + ${(i ?? 0) * U0}`);
});

// ---------------------------------------------------------------- lifetime and current

const nominal = {
  currentMA: ring.targetMA,
  pressureRatio: 1,
  voltMV: ring.nominalVoltMV,
  apertureSigma: [30, 30] as const,
  acceptanceRatio: 1,
  physicalAcceptance: 1,
};

Deno.test("lifetime: Touschek scales as σ_z·δ_acc³/I between two RF voltages", () => {
  const a = ringLifetime(ring, { ...nominal, voltMV: 2.0 });
  const b = ringLifetime(ring, { ...nominal, voltMV: 2.8 });
  const expected = (a.bunchPs / b.bunchPs) * (a.acceptance / b.acceptance) ** 3;
  close(a.touschekH / b.touschekH, expected, 1e-9, "τ_T ratio");
  const half = ringLifetime(ring, { ...nominal, currentMA: ring.targetMA / 2 });
  close(half.touschekH, 2 * ringLifetime(ring, nominal).touschekH, 1e-9, "∝ 1/I");
});

Deno.test("lifetime: gas scattering scales as 1/P", () => {
  const a = ringLifetime(ring, nominal);
  const b = ringLifetime(ring, { ...nominal, pressureRatio: 3 });
  close(a.gasH / b.gasH, 3, 1e-9, "τ_gas ratio");
  assert.ok(b.totalH < a.totalH);
});

Deno.test("lifetime: quantum lifetime (τ/2)·e^ξ/ξ takes over at a few σ of aperture", () => {
  close(quantumLifetimeS(10, 18), 0.005 * Math.exp(18) / 18, 1e-12, "τ_q");
  const tight = ringLifetime(ring, { ...nominal, apertureSigma: [30, 5] });
  assert.ok(tight.quantumH < 1, `5σ: ${tight.quantumH} h`);
  assert.ok(ringLifetime(ring, nominal).quantumH > 1e3);
});

Deno.test("lifetime: the current decays as the lifetime reading says with injection off", async () => {
  const { sim, clock } = simAt(3);
  await sim.write("TIMING:INJ:ENABLE", "DISABLED");
  clock.advance(1_000);
  const i0 = await num(sim, "RING:DCCT:CURRENT");
  const tau = await num(sim, "RING:LIFETIME");
  clock.advance(15 * MIN);
  const i1 = await num(sim, "RING:DCCT:CURRENT");
  close(-(15 / 60) / Math.log(i1 / i0), tau, 0.03, "τ from the decay (h)");
});

Deno.test("current: a refill rises at rep·Q·ε·f₀, one nC per revolution is one mA", async () => {
  const { sim, clock } = simAt();
  const t0 = clock.now();
  sim.addFault({ kind: "rf-trip", station: 3, cause: "REFL_PWR", at: t0, reset: t0 + 2 * MIN });
  clock.advance(6 * MIN);
  const q = await num(sim, "LINAC:GUN:CHARGE");
  const rep = await num(sim, "TIMING:REP:RATE");
  const rate = sim.model.injection.fillRateMAps(clock.now(), state(sim));
  const eff = sim.model.injection.injectionEfficiency(clock.now(), state(sim));
  close(rate, (rep * q * (eff / 100) * C_LIGHT) / C / 1e6, 0.02, "fill rate (mA/s)");
  const a = await num(sim, "RING:DCCT:CURRENT");
  clock.advance(10_000);
  const b = await num(sim, "RING:DCCT:CURRENT");
  assert.ok(a < ring.targetMA - 30, `still filling (${a} mA)`);
  close((b - a) / 10, rate, 0.1, "rise of the DCCT");
});

Deno.test("current: the synchrotron radiation power is I·U₀ and stays under the RF's forward power", async () => {
  const i = await num(base, "RING:DCCT:CURRENT");
  const fwd = (await nums(base, [1, 2, 3, 4].map((n) => `RF:STN:0${n}:FWD:PWR`))).reduce(
    (s, p) => s + p,
    0,
  );
  assert.ok(i * U0 < fwd && i * U0 > 0.3 * fwd, `P_SR ${i * U0} kW against ${fwd} kW forward`);
});

// ---------------------------------------------------------------- insertion devices

Deno.test("insertion devices: closing a gap shifts ν_y by β_y·L/(8π·ρ₀²), 1/ρ₀ = B₀/Bρ", async () => {
  const { sim, clock } = simAt();
  const gap = sim.facility.catalogue.find((d) =>
    d.role === "insertion" && d.suffix === "GAP:SETPT"
  );
  assert.ok(gap);
  const g0 = await num(sim, gap.name);
  const nu0 = sim.model.tunes(clock.now(), state(sim));
  await sim.write(gap.name, g0 - 2);
  clock.advance(10_000);
  const nu1 = sim.model.tunes(clock.now(), state(sim));
  const betaY = sim.model.optics.lattice.of(gap)?.beta[1] ?? 0;
  const spec = sim.facility.spec.ring;
  const k = (g: number) => (undulatorFieldT(g, spec.idPeriodMm) / rigidityTm(E)) ** 2;
  const expected = (betaY * spec.idLengthM * (k(g0 - 2) - k(g0))) / (8 * Math.PI);
  close((nu1[1] ?? 0) - (nu0[1] ?? 0), expected, 1e-6, "Δν_y");
  assert.ok(Math.abs((nu1[0] ?? 0) - (nu0[0] ?? 0)) < 1e-9, "no horizontal focusing");
  assert.ok(expected > 0);
});

// ---------------------------------------------------------------- injector

Deno.test("injector: the linac energy follows E_gun + A·cos(φ − φ_crest) over a phase scan", async () => {
  const { sim, clock } = simAt();
  const phases = [-34, -24, -14, -4, 6, 16, 26];
  const energies: number[] = [];
  for (const p of phases) {
    await sim.write("RF:PHASE:SETPT", p);
    clock.advance(5_000);
    energies.push(await num(sim, "DIAG:ENERGY:MEAS"));
  }
  // Least squares for E = a·cos φ + b·sin φ + c (three normal equations, Cramer's rule).
  const rows = phases.map((p) => [Math.cos((p * Math.PI) / 180), Math.sin((p * Math.PI) / 180), 1]);
  const m = [0, 1, 2].map((i) => [0, 1, 2].map((j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)));
  const v = [0, 1, 2].map((i) => rows.reduce((s, r, n) => s + r[i]! * energies[n]!, 0));
  const det = (a: number[][]) =>
    a[0]![0]! * (a[1]![1]! * a[2]![2]! - a[1]![2]! * a[2]![1]!) -
    a[0]![1]! * (a[1]![0]! * a[2]![2]! - a[1]![2]! * a[2]![0]!) +
    a[0]![2]! * (a[1]![0]! * a[2]![1]! - a[1]![1]! * a[2]![0]!);
  const d = det(m);
  const [a, b, c] = [0, 1, 2].map((k) =>
    det(m.map((row, i) => row.map((x, j) => (j === k ? v[i]! : x)))) / d
  ) as [number, number, number];
  rows.forEach((r, n) => {
    const fit = a * r[0]! + b * r[1]! + c;
    assert.ok(Math.abs(fit - energies[n]!) < 0.15, `φ ${phases[n]}: ${energies[n]} vs ${fit}`);
  });
  const crest = (Math.atan2(b, a) * 180) / Math.PI;
  assert.ok(crest > -34 && crest < 26, `crest at ${crest}°`);
  assert.ok(Math.hypot(a, b) > 100 && c > -1, `A = ${Math.hypot(a, b)} MeV, E_gun = ${c} MeV`);
});

Deno.test("injector: the booster energy is its dipole's rigidity, E ∝ I_dipole", async () => {
  const { sim, clock } = simAt();
  const e0 = await num(sim, "BOOSTER:ENERGY");
  const i0 = await num(sim, "BOOSTER:DIPOLE:CURRENT");
  await sim.write("BOOSTER:DIPOLE:CURRENT", i0 - 9.8);
  clock.advance(30_000);
  const e1 = await num(sim, "BOOSTER:ENERGY");
  close(e1 / e0, (i0 - 9.8) / i0, 0.002, "E/E₀");
});

// ---------------------------------------------------------------- incidents

Deno.test("incidents: with no stored beam the beam signals are INVALID and losses fall to background", async () => {
  const { sim, clock } = simAt();
  sim.addFault({ kind: "rf-trip", station: 2, cause: "ARC", at: clock.now() });
  clock.advance(60_000); // twenty fade times after the burst at the dump
  assert.ok((await num(sim, "RING:DCCT:CURRENT")) < 0.05);
  const reads = await sim.read(["RING:BPM:05:X", "RING:TUNE:X", "RING:LIFETIME", "DIAG:INJ:EFF"]);
  for (const r of reads) assert.equal(r.severity, "INVALID", `${JSON.stringify(r)}`);
  const blm = await nums(
    sim,
    Array.from({ length: 10 }, (_, i) => `RING:BLM:${String(i + 1).padStart(3, "0")}:LOSS`).filter((
      n,
    ) => sim.facility.byName.has(n)),
  );
  assert.ok(blm.length > 0 && blm.every((b) => b < 20), `BLMs ${blm}`);
});

Deno.test("incidents: after an RF trip the cavity cools with its thermal lag, not at once", async () => {
  const { sim, clock } = simAt();
  const before = await num(sim, "RF:STN:02:CAV:TEMP");
  sim.addFault({ kind: "rf-trip", station: 2, cause: "ARC", at: clock.now() });
  clock.advance(10_000);
  const soon = await num(sim, "RF:STN:02:CAV:TEMP");
  clock.advance(60 * MIN);
  const late = await num(sim, "RF:STN:02:CAV:TEMP");
  assert.ok(before - soon < 0.2 * (before - late), `${before} → ${soon} (10 s) → ${late} (1 h)`);
  assert.ok(before - late > 2, "it does cool");
});

// ---------------------------------------------------------------- grown facility

Deno.test("grown facility: one ring, the bucket and bunch length follow its own α_c and harmonic", () => {
  const { sim } = simAt(1, 20_000);
  const big = sim.model.ring;
  assert.ok(big);
  assert.ok(big.circumferenceM > C);
  close(
    big.alphaC * big.circumferenceM,
    (sim.model.optics.ring?.ring as RingOptics).radiation.i1,
    1e-9,
    "I1",
  );
  close(rfFrequencyMHz(big), rfFrequencyMHz(ring), 1e-9, "the same RF");
  const f0 = C_LIGHT / big.circumferenceM;
  close(
    bunchLengthPs(big, 2.4),
    ((big.alphaC * big.energySpread) / (2 * Math.PI * synchrotronTune(big, 2.4) * f0)) * 1e12,
    1e-9,
    "σ_t",
  );
  close(energyLossMeV(big), U0, 1e-12, "same ρ, same U₀");
  assert.ok(big.emittanceNm[0] < ring.emittanceNm[0], "more, weaker cells: a smaller emittance");
  assert.ok(big.dampingMs[0] > ring.dampingMs[0], "a longer turn: slower damping");
});

// ---------------------------------------------------------------- measurement signals

Deno.test("signals: turn-by-turn data oscillate at the fractional tune of their plane", async () => {
  const { sim } = simAt();
  for (const [plane, letter] of [[0, "X"], [1, "Y"]] as const) {
    const [r] = await sim.read([`RING:BPM:07:TBT:${letter}`]);
    const wave = r?.value as number[];
    assert.ok(Array.isArray(wave) && wave.length >= 64);
    const mean = wave.reduce((s, x) => s + x, 0) / wave.length;
    // The peak of |Σ(x − x̄)e^{−2πiqn}| over q in (0, 0.5).
    let best = 0;
    let peak = 0;
    for (let q = 0.005; q < 0.5; q += 0.0005) {
      let re = 0;
      let im = 0;
      wave.forEach((x, n) => {
        re += (x - mean) * Math.cos(2 * Math.PI * q * n);
        im += (x - mean) * Math.sin(2 * Math.PI * q * n);
      });
      if (Math.hypot(re, im) > peak) [peak, best] = [Math.hypot(re, im), q];
    }
    const frac = lattice.tunes[plane] % 1;
    assert.ok(Math.abs(best - Math.min(frac, 1 - frac)) < 0.005, `${letter}: ${best} vs ${frac}`);
  }
});

Deno.test("signals: an RF frequency step moves no vertical BPM (no vertical dispersion)", async () => {
  const { sim, clock } = simAt();
  const names = Array.from({ length: 60 }, (_, i) => `RING:BPM:${pad(i + 1)}:Y`);
  const before = await nums(sim, names);
  const f0 = await num(sim, "RF:MO:FREQ:SETPT");
  await sim.write("RF:MO:FREQ:SETPT", f0 + 0.001);
  clock.advance(20_000);
  const after = await nums(sim, names);
  assert.ok(after.every((y, i) => Math.abs(y - (before[i] ?? 0)) < 0.02));
});

Deno.test("signals: the current's LOLO alarm of a beam loss is in the alarm log at the loss", async () => {
  const { sim, clock } = simAt();
  const t0 = clock.now() + 5_000;
  sim.addFault({ kind: "rf-trip", station: 1, cause: "ARC", at: t0 });
  clock.advance(5 * MIN);
  const alarms = await sim.logs({
    source: "alarm",
    from: new Date(t0 - MIN).toISOString(),
    to: new Date(clock.now()).toISOString(),
    limit: 1000,
  });
  const lolo = alarms.find((e) => e.title === "RING:DCCT:CURRENT LOLO");
  assert.ok(lolo, alarms.map((e) => e.title).join(", "));
  assert.ok(Math.abs(Date.parse(lolo.time) - t0) < 2_000, `${lolo.time}`);
  const [dcct] = await sim.read(["RING:DCCT:CURRENT"]);
  assert.equal(dcct?.severity, "MAJOR");
});

// ---------------------------------------------------------------- grown facility budgets

Deno.test("grown facility: with the cell length and phase advance kept, emittance falls as θ², θ the bend per cell", () => {
  const { sim } = simAt(1, 100_000);
  const big = sim.model.ring;
  const optics = sim.model.optics.ring?.ring;
  assert.ok(big && optics);
  const ratio = big.emittanceNm[0] / ring.emittanceNm[0];
  // η ∝ θ·L_cell and H ∝ η²/β ∝ θ² in each dipole: I5 = N·θ²·(ρθ)/ρ³ ∝ θ², I2 fixed, so ε ∝ θ²
  // (the scaled cell's θ³ needs the cell to shrink with its bend).
  const square = (lattice.cells / optics.cells) ** 2;
  assert.ok(ratio > 0.8 * square && ratio < 1.25 * square, `ε ratio ${ratio} against θ² ${square}`);
});

Deno.test("grown facility: at 10^5 devices the RF's forward power is the wall loss plus I·U₀, one beam", async () => {
  const { sim } = simAt(1, 100_000);
  const big = sim.model.ring;
  assert.ok(big);
  const stations = sim.facility.catalogue.filter((d) => /^RF:STN:\d+:FWD:PWR$/.test(d.name));
  assert.equal(stations.length, 4, "the ring's four stations, not one per arc");
  const [i, ...rest] = await nums(sim, [
    "RING:DCCT:CURRENT",
    ...stations.flatMap((d) => [d.name.replace("FWD:PWR", "CAV:VOLT"), d.name]),
  ]);
  let fwd = 0;
  let wall = 0;
  for (let k = 0; k < stations.length; k++) {
    const v = rest[2 * k] ?? 0;
    wall += (v * v) / (2 * big.shuntImpedanceMOhm * 1000);
    fwd += rest[2 * k + 1] ?? 0;
  }
  const beam = (i ?? 0) * energyLossMeV(big);
  assert.ok(Math.abs(fwd - wall - beam) < 12, `${fwd} kW = ${wall} + ${beam}`);
  assert.ok(beam / fwd > 0.3, "the beam takes a fair share of the RF power");
});

// ---------------------------------------------------------------- magnets the beam cannot follow

Deno.test("magnets: a ring dipole supply that trips off loses the stored beam; a small dipole step does not", async () => {
  const { sim, clock } = simAt();
  const i0 = await num(sim, "RING:DIPOLE:CURRENT");
  await sim.write("RING:DIPOLE:CURRENT", i0 * 1.003);
  clock.advance(10_000);
  assert.ok((await num(sim, "RING:DCCT:CURRENT")) > 290, "0.3 % of field: the energy follows");
  sim.addFault({ kind: "supply-fault", device: "RING:DIPOLE", at: clock.now() + 1_000 });
  clock.advance(MIN);
  const [current] = await sim.read(["RING:DCCT:CURRENT"]);
  assert.ok(Number(current?.value) < 0.05, `stored after the dipole tripped: ${current?.value} mA`);
});

Deno.test("magnets: a stored beam cannot follow its energy beyond the momentum acceptance", async () => {
  const { sim, clock } = simAt();
  const i0 = await num(sim, "RING:DIPOLE:CURRENT");
  const step = 1.5 * ring.momentumAcceptance;
  await sim.write("RING:DIPOLE:CURRENT", i0 * (1 - step));
  clock.advance(MIN);
  assert.ok((await num(sim, "RING:DCCT:CURRENT")) < 0.05, `δ = ${-step}`);
});

Deno.test("magnets: a quadrupole family switched off loses the beam, by instability or across the resonances", async () => {
  for (const family of ["RING:Q1", "RING:Q2"]) {
    const { sim, clock } = simAt();
    sim.addFault({ kind: "supply-fault", device: family, at: clock.now() + 1_000 });
    clock.advance(MIN);
    assert.ok((await num(sim, "RING:DCCT:CURRENT")) < 0.05, `${family} off`);
  }
  // The focusing family off leaves no periodic solution at all: the lattice itself says so.
  const spec = base.facility.spec.optics["RING"]?.cell;
  assert.ok(spec);
  const k = new Map(lattice.quads.map((q) => [q.family, q.strength]));
  const off = {
    ...spec,
    quads: spec.quads.map((q) => ({
      ...q,
      match: undefined,
      k1: q.family === "RING:Q1" ? 0 : k.get(q.family),
    })),
  };
  assert.throws(() => buildRingOptics(off, lattice.tunes, rho, { match: false }), /unstable/);
});

Deno.test("magnets: a tune walked across the half-integer with stored beam loses it, one kept short of it does not", async () => {
  const { sim, clock } = simAt();
  const q = base.model.optics.quads.find((f) => f.magnet.name === "RING:Q3:CURRENT");
  assert.ok(q);
  const i0 = await num(sim, "RING:Q3:CURRENT");
  // ν_x moves by weight·ΔK: to .40, then to .60 (across .5).
  const perAmp = (q.weight[0] * q.strength) / i0;
  await sim.write("RING:Q3:CURRENT", i0 + 0.17 / perAmp);
  clock.advance(20_000);
  assert.ok((await num(sim, "RING:DCCT:CURRENT")) > 250, "ν_x ≈ .40: stored");
  await sim.write("RING:Q3:CURRENT", i0 + 0.37 / perAmp);
  clock.advance(MIN);
  const nu = sim.model.tunes(clock.now(), state(sim))[0];
  assert.ok(nu % 1 > 0.55, `ν_x ${nu}`);
  assert.ok((await num(sim, "RING:DCCT:CURRENT")) < 0.05, "crossed .5 with beam");
});

Deno.test("signals: without stored beam the synchrotron-light monitors measure nothing: emittance and bunch length INVALID", async () => {
  const { sim, clock } = simAt();
  const names = ["DIAG:EMIT:X", "DIAG:EMIT:Y", "DIAG:BUNCH:LENGTH"];
  for (const r of await sim.read(names)) assert.equal(r.severity === "INVALID", false, r.device);
  sim.addFault({ kind: "rf-trip", station: 2, cause: "ARC", at: clock.now() });
  clock.advance(90_000);
  assert.ok((await num(sim, "RING:DCCT:CURRENT")) < 0.05);
  for (const r of await sim.read(names)) {
    assert.equal(r.severity, "INVALID", `${r.device} reads ${r.value} with no beam`);
    assert.equal(r.status, "NO_BEAM");
  }
});
