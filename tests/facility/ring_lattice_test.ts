/**
 * The storage ring's lattice against the formulas it must satisfy: the tunes
 * its matched quadrupoles give, ∮ds/β, momentum compaction from the
 * dispersion, chromaticity from the quadrupoles and sextupoles, the
 * radiation integrals, and the tune response the live model uses against
 * the lattice rebuilt at the new strength.
 */

import assert from "node:assert/strict";
import { defaultFacility } from "../../src/facility/facility.ts";
import { buildRingOptics, type RingCellSpec } from "../../src/facility/ring_lattice.ts";
import { C_Q, energyLossMeV, gamma, ringParams } from "../../src/facility/ring.ts";

const spec = defaultFacility().spec;
const ringSpec = spec.optics["RING"];
const cell = ringSpec?.cell as RingCellSpec;
const rho = spec.ring.bendRadiusM;
const tunes: [number, number] = [ringSpec?.phaseTurns[0] ?? 0, ringSpec?.phaseTurns[1] ?? 0];
const ring = buildRingOptics(cell, tunes, rho);
const C = cell.cells * cell.cellLengthM;

/** Midpoint sum of f(s) over the ring on `n` steps. */
function integrate(f: (s: number) => number, n = 200_000, length = C): number {
  const h = length / n;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += f((i + 0.5) * h) * h;
  return sum;
}

/** Whether s (m) lies inside one of the cell's dipoles. */
function inDipole(s: number): boolean {
  const u = ((s % cell.cellLengthM) + cell.cellLengthM) % cell.cellLengthM;
  const length = rho * (2 * Math.PI) / (cell.cells * cell.dipolesAtM.length);
  return cell.dipolesAtM.some((c) => Math.abs(u - c) < length / 2);
}

Deno.test("the matched quadrupoles give the ring its tunes: ∮ds/β = 2πν, and the lattice is periodic", () => {
  assert.ok(Math.abs(ring.tunes[0] - tunes[0]) < 1e-9 && Math.abs(ring.tunes[1] - tunes[1]) < 1e-9);
  for (const plane of [0, 1] as const) {
    const nu = integrate((s) => 1 / ring.at(s).beta[plane]) / (2 * Math.PI);
    assert.ok(Math.abs(nu - tunes[plane]) < 0.002, `plane ${plane}: ∮ds/β/2π = ${nu}`);
    const a = ring.at(0.3);
    const b = ring.at(0.3 + 5 * cell.cellLengthM);
    assert.ok(Math.abs(a.beta[plane] - b.beta[plane]) < 1e-9, "β repeats every cell");
    assert.ok(Math.abs(b.phase[plane] - a.phase[plane] - 5 * ring.cellPhase[plane]) < 1e-9);
  }
  // Strong enough: the focusing quadrupoles are where β_x peaks, the defocusing where β_y does.
  const f = ring.quads.filter((q) => q.strength > 1);
  const d = ring.quads.filter((q) => q.strength < -1);
  assert.ok(f.length >= 2 && d.length >= 2);
  assert.ok(Math.min(...f.map((q) => q.beta[0])) > Math.max(...d.map((q) => q.beta[0])));
  assert.ok(Math.min(...d.map((q) => q.beta[1])) > Math.max(...f.map((q) => q.beta[1])));
});

Deno.test("momentum compaction is (1/C)∮η/ρ ds over the dipoles", () => {
  const alpha = integrate((s) => (inDipole(s) ? ring.at(s).eta / rho : 0)) / C;
  assert.ok(Math.abs(alpha - ring.alphaC) / ring.alphaC < 0.005, `${alpha} vs ${ring.alphaC}`);
  assert.ok(ring.alphaC > 1e-3 && ring.alphaC < 1e-2);
  // The dispersion's slope is dη/ds.
  for (const s of [2.1, 40.4, 133.3]) {
    const h = 1e-4;
    const slope = (ring.at(s + h).eta - ring.at(s - h).eta) / (2 * h);
    assert.ok(Math.abs(slope - ring.at(s).etaPrime) < 2e-3, `η' at ${s}`);
  }
});

Deno.test("natural chromaticity is −(1/4π)∮β·K ds, and the sextupoles bring it to the set values by ±Σβ·η·K₂L/4π", () => {
  const sum = [0, 0];
  for (const q of ring.quads) {
    sum[0] = (sum[0] ?? 0) - (q.beta[0] * q.strength * q.lengthM) / (4 * Math.PI);
    sum[1] = (sum[1] ?? 0) + (q.beta[1] * q.strength * q.lengthM) / (4 * Math.PI);
  }
  // Thin-lens sums over one cell's magnets (the bends' weak focusing adds a little horizontally).
  for (const plane of [0, 1] as const) {
    const thin = (sum[plane] ?? 0) * cell.cells;
    assert.ok(
      Math.abs(thin - ring.naturalChromaticity[plane]) < 0.06 * Math.abs(thin),
      `plane ${plane}: ${thin} vs ${ring.naturalChromaticity[plane]}`,
    );
    assert.ok(ring.naturalChromaticity[plane] < -5, "a strongly focusing ring: large and negative");
  }
  const xi = [...ring.naturalChromaticity];
  for (const s of ring.sextupoles) {
    xi[0] = (xi[0] ?? 0) + (s.beta[0] * s.eta * s.strength * cell.cells) / (4 * Math.PI);
    xi[1] = (xi[1] ?? 0) - (s.beta[1] * s.eta * s.strength * cell.cells) / (4 * Math.PI);
  }
  assert.ok(Math.abs((xi[0] ?? 0) - (cell.chromaticity[0] ?? 0)) < 1e-9);
  assert.ok(Math.abs((xi[1] ?? 0) - (cell.chromaticity[1] ?? 0)) < 1e-9);
});

Deno.test("the tune response the model uses, ±Σβ·ΔK·L/4π, is the lattice's own to first order", () => {
  const matchedK = new Map(ring.quads.map((q) => [q.family, q.strength]));
  for (const family of ["RING:Q1", "RING:Q2", "RING:Q5"]) {
    const eps = 0.002;
    const changed: RingCellSpec = {
      ...cell,
      quads: cell.quads.map((q) => ({
        ...q,
        k1: (matchedK.get(q.family) ?? 0) * (q.family === family ? 1 + eps : 1),
      })),
    };
    const exact = buildRingOptics(changed, tunes, rho, { match: false });
    const magnets = ring.quads.filter((q) => q.family === family);
    for (const plane of [0, 1] as const) {
      const linear = magnets.reduce(
        (sum, q) =>
          sum +
          ((plane === 0 ? 1 : -1) * q.beta[plane] * q.strength * eps * q.lengthM * cell.cells) /
            (4 * Math.PI),
        0,
      );
      const shift = exact.tunes[plane] - ring.tunes[plane];
      assert.ok(
        Math.abs(shift - linear) < 0.03 * Math.abs(linear) + 1e-5,
        `${family} plane ${plane}: lattice ${shift}, linear ${linear}`,
      );
    }
  }
});

Deno.test("radiation integrals: I2 = 2π/ρ, and the energy spread, emittance and damping follow from them", () => {
  const r = ring.radiation;
  assert.ok(Math.abs(r.i2 - (2 * Math.PI) / rho) < 1e-9);
  assert.ok(Math.abs(r.i3 - (2 * Math.PI) / rho ** 2) < 1e-9);
  assert.ok(Math.abs(r.i1 / C - ring.alphaC) < 1e-12);
  const params = ringParams(spec.ring, ring, 2.4);
  const g2 = gamma(spec.ring.energyMeV) ** 2;
  const jx = 1 - r.i4 / r.i2;
  const je = 2 + r.i4 / r.i2;
  assert.ok(Math.abs(params.energySpread - Math.sqrt((C_Q * g2) / (je * rho))) < 1e-9);
  assert.ok(Math.abs(params.emittanceNm[0] - (C_Q * g2 * r.i5) / (jx * r.i2) * 1e9) < 1e-9);
  assert.ok(Math.abs(jx + 1 + je - 4) < 1e-12, "Robinson: J_x + J_y + J_E = 4");
  // τ = 2·E·T₀/(J·U₀).
  const t0 = C / 299_792_458;
  const u0 = energyLossMeV(spec.ring);
  assert.ok(
    Math.abs(params.dampingMs[0] - (2 * spec.ring.energyMeV * t0 * 1000) / (jx * u0)) < 1e-9,
  );
  assert.ok(
    Math.abs(params.dampingMs[2] - (2 * spec.ring.energyMeV * t0 * 1000) / (je * u0)) < 1e-9,
  );
});
