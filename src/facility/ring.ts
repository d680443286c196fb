/**
 * Storage-ring beam physics as closed formulas: energy loss per turn, RF
 * bucket, bunch length and the lifetimes. Pure functions of the ring
 * parameters in `facility.json` ("ring"), so tests can check each against
 * its textbook form.
 *
 * @module
 */

import type { RingSpec } from "./facility.ts";

/** Speed of light, m/s. */
export const C_LIGHT = 299_792_458;

/** Energy loss per turn to synchrotron radiation, MeV: U₀ = 88.5 keV·E[GeV]⁴/ρ[m]. */
export function energyLossMeV(ring: RingSpec): number {
  return (0.0885 * (ring.energyMeV / 1000) ** 4) / ring.bendRadiusM;
}

/** Revolution frequency, Hz, for a circumference in m. */
export function revolutionHz(circumferenceM: number): number {
  return C_LIGHT / circumferenceM;
}

/**
 * RF momentum acceptance (relative) for a total RF voltage `voltMV`:
 * δ² = 2U₀/(π·h·α·E)·F(q), F(q) = 2(√(q²−1) − arccos(1/q)), q = V/U₀;
 * 0 when the voltage does not cover the energy loss (q ≤ 1).
 */
export function rfAcceptance(ring: RingSpec, voltMV: number): number {
  const u0 = energyLossMeV(ring);
  const q = voltMV / u0;
  if (!(q > 1)) return 0;
  const f = 2 * (Math.sqrt(q * q - 1) - Math.acos(1 / q));
  const scale = (2 * u0) / (Math.PI * ring.harmonic * ring.momentumCompaction * ring.energyMeV);
  return Math.sqrt(scale * f);
}

/** Synchrotron tune: ν_s = √(h·α·√(V² − U₀²)/(2π·E)); 0 when V ≤ U₀. */
export function synchrotronTune(ring: RingSpec, voltMV: number): number {
  const u0 = energyLossMeV(ring);
  if (!(voltMV > u0)) return 0;
  const vcos = Math.sqrt(voltMV * voltMV - u0 * u0);
  return Math.sqrt(
    (ring.harmonic * ring.momentumCompaction * vcos) / (2 * Math.PI * ring.energyMeV),
  );
}

/** Natural rms bunch length, ps: σ_t = α·σ_δ/(2π·ν_s·f_rev); Infinity without a bucket. */
export function bunchLengthPs(ring: RingSpec, voltMV: number, circumferenceM: number): number {
  const nus = synchrotronTune(ring, voltMV);
  if (nus === 0) return Infinity;
  const frev = revolutionHz(circumferenceM);
  return ((ring.momentumCompaction * ring.energySpread) / (2 * Math.PI * nus * frev)) * 1e12;
}

/** Quantum lifetime, s: τ = (τ_damp/2)·e^ξ/ξ; 0 when ξ ≤ 0. */
export function quantumLifetimeS(dampingMs: number, xi: number): number {
  if (!(xi > 0)) return 0;
  if (xi > 600) return Infinity;
  return ((dampingMs / 1000) / 2) * Math.exp(xi) / xi;
}

/** Inputs of {@link ringLifetime}. */
export interface LifetimeInputs {
  /** Stored current, mA. */
  currentMA: number;
  /** Average ring pressure relative to the reference pressure. */
  pressureRatio: number;
  /** Total RF voltage, MV. */
  voltMV: number;
  /** Smallest transverse aperture margin over the beam size, σ units [H, V]. */
  apertureSigma: readonly [number, number];
}

/** The lifetime and its parts, in hours (Infinity for a part that does not limit). */
export interface Lifetime {
  totalH: number;
  gasH: number;
  touschekH: number;
  quantumH: number;
  /** The momentum acceptance used: min(RF, lattice). */
  acceptance: number;
}

/**
 * Beam lifetime: 1/τ = 1/τ_gas + 1/τ_Touschek + 1/τ_quantum, with
 * τ_gas ∝ 1/P, τ_Touschek ∝ δ_acc³/I and quantum lifetimes from the RF bucket
 * (longitudinal) and the transverse aperture margin.
 */
export function ringLifetime(ring: RingSpec, x: LifetimeInputs): Lifetime {
  const acceptance = Math.min(ring.momentumAcceptance, rfAcceptance(ring, x.voltMV));
  const gasH = ring.gasLifetimeH / Math.max(1e-9, x.pressureRatio);
  const touschekH = x.currentMA > 0
    ? ring.touschekLifetimeH * (ring.targetMA / x.currentMA) *
      (acceptance / ring.momentumAcceptance) ** 3
    : Infinity;
  const [dx = 6, dy = 6, ds = 3] = ring.dampingMs;
  const xiL = acceptance ** 2 / (2 * ring.energySpread ** 2);
  const parts = [
    quantumLifetimeS(ds, xiL),
    quantumLifetimeS(dx, x.apertureSigma[0] ** 2 / 2),
    quantumLifetimeS(dy, x.apertureSigma[1] ** 2 / 2),
  ];
  const quantumS = 1 / parts.reduce((sum, p) => sum + 1 / p, 0);
  const quantumH = quantumS / 3600;
  const totalH = 1 / (1 / gasH + 1 / touschekH + 1 / quantumH);
  return { totalH, gasH, touschekH, quantumH, acceptance };
}

/**
 * Peak field of a planar permanent-magnet undulator, T (Halbach):
 * B = 3.44·exp(−g/λ·(5.08 − 1.54·g/λ)).
 */
export function undulatorFieldT(gapMm: number, periodMm: number): number {
  const r = gapMm / periodMm;
  return 3.44 * Math.exp(-r * (5.08 - 1.54 * r));
}

/** Magnetic rigidity Bρ of an electron of `energyMeV`, T·m. */
export function rigidityTm(energyMeV: number): number {
  return energyMeV / 299.792458;
}
