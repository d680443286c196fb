/**
 * The ring's closed formulas: the lifetime's parts against their scalings
 * (Touschek ∝ σ_z·δ³/I, elastic gas scattering ∝ the transverse acceptance
 * left, the momentum acceptance the lesser of the RF's, the lattice's and
 * the aperture's) and the RF bucket.
 */

import assert from "node:assert/strict";
import { defaultFacility } from "../../src/facility/facility.ts";
import { buildRingOptics, type RingCellSpec } from "../../src/facility/ring_lattice.ts";
import {
  bunchLengthPs,
  energyLossMeV,
  type LifetimeInputs,
  rfAcceptance,
  ringLifetime,
  ringParams,
  synchrotronTune,
} from "../../src/facility/ring.ts";

const spec = defaultFacility().spec;
const cell = spec.optics["RING"]?.cell as RingCellSpec;
const optics = buildRingOptics(cell, [14.23, 8.31], spec.ring.bendRadiusM);
const ring = ringParams(spec.ring, optics, 2.4);
const nominal: LifetimeInputs = {
  currentMA: ring.targetMA,
  pressureRatio: 1,
  voltMV: 2.4,
  apertureSigma: [Infinity, Infinity],
  acceptanceRatio: 1,
  physicalAcceptance: Infinity,
};

Deno.test("at the nominal settings the lifetime is its parts' 1/τ sum, with Touschek and gas at their definitions", () => {
  const l = ringLifetime(ring, nominal);
  assert.ok(Math.abs(l.touschekH - ring.touschekLifetimeH) < 1e-9);
  assert.ok(Math.abs(l.gasH - ring.gasLifetimeH) < 1e-9);
  assert.ok(Math.abs(1 / l.totalH - (1 / l.gasH + 1 / l.touschekH + 1 / l.quantumH)) < 1e-12);
  assert.ok(l.totalH > 8 && l.totalH < 12, `${l.totalH} h`);
});

Deno.test("Touschek lifetime scales as σ_z·δ³/I: a longer bunch lives longer at the same acceptance", () => {
  // The aperture, not the RF, limits the acceptance here, so only the bunch length changes with V.
  const limited = { ...nominal, physicalAcceptance: 0.005 };
  const a = ringLifetime(ring, { ...limited, voltMV: 2.4 });
  const b = ringLifetime(ring, { ...limited, voltMV: 1.6 });
  assert.equal(a.acceptance, 0.005);
  assert.equal(b.acceptance, 0.005);
  assert.ok(b.bunchPs > a.bunchPs * 1.1, "a lower voltage lengthens the bunch");
  assert.ok(Math.abs(b.touschekH / a.touschekH - b.bunchPs / a.bunchPs) < 1e-9);
  // δ³ and 1/I.
  const c = ringLifetime(ring, { ...limited, physicalAcceptance: 0.0025 });
  assert.ok(Math.abs(c.touschekH / a.touschekH - 0.125) < 1e-9);
  const d = ringLifetime(ring, { ...limited, currentMA: ring.targetMA / 2 });
  assert.ok(Math.abs(d.touschekH / a.touschekH - 2) < 1e-9);
});

Deno.test("elastic gas scattering shortens the lifetime as the orbit eats the transverse acceptance", () => {
  const full = ringLifetime(ring, nominal);
  const half = ringLifetime(ring, { ...nominal, acceptanceRatio: 0.5 });
  const f = ring.elasticGasFraction;
  assert.ok(Math.abs(full.gasH / half.gasH - (f / 0.5 + (1 - f))) < 1e-9);
  assert.ok(half.totalH < full.totalH);
});

Deno.test("the RF bucket: acceptance from U₀, h, α_c and V; none when V ≤ U₀", () => {
  const u0 = energyLossMeV(ring);
  const q = 2.4 / u0;
  const f = 2 * (Math.sqrt(q * q - 1) - Math.acos(1 / q));
  const delta = Math.sqrt((u0 * f) / (Math.PI * ring.harmonic * ring.alphaC * ring.energyMeV));
  assert.ok(Math.abs(rfAcceptance(ring, 2.4) - delta) < 1e-12);
  assert.equal(rfAcceptance(ring, 0.9 * u0), 0);
  assert.equal(synchrotronTune(ring, 0.9 * u0), 0);
  assert.equal(bunchLengthPs(ring, 0.9 * u0), Infinity);
  assert.ok(
    ring.nominalAcceptance < ring.momentumAcceptance,
    "the RF limits at the nominal voltage",
  );
});
