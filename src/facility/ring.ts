/**
 * Storage-ring beam physics as closed formulas: energy loss per turn,
 * radiation integrals (energy spread, emittance, damping), the RF bucket,
 * bunch length and the lifetimes. Pure functions of {@link RingParams}: the
 * ring parameters of `facility.json` ("ring") with what its lattice gives
 * (momentum compaction, radiation integrals, circumference), so tests can
 * check each against its textbook form and against the lattice.
 *
 * @module
 */

import type { RingSpec } from "./facility.ts";
import type { RingOptics } from "./ring_lattice.ts";

/** Speed of light, m/s. */
export const C_LIGHT = 299_792_458;
/** Electron rest energy, MeV. */
export const ELECTRON_MEV = 0.51099895;
/** Quantum constant C_q = 55ħc/(32√3·mc²), m. */
export const C_Q = 3.8319e-13;

/** The ring's parameters: the definition's, and what its lattice gives. */
export interface RingParams extends RingSpec {
  circumferenceM: number;
  /** Momentum compaction α_c = I1/C. */
  alphaC: number;
  /** Natural rms relative energy spread. */
  energySpread: number;
  /** Damping partition numbers [J_x, J_y, J_E]. */
  partition: [number, number, number];
  /** Radiation damping times [H, V, longitudinal], ms. */
  dampingMs: [number, number, number];
  /** Equilibrium emittance [H, V], nm·rad. */
  emittanceNm: [number, number];
  /** Total RF voltage of the initial settings, MV, and what it gives: the Touschek reference. */
  nominalVoltMV: number;
  nominalAcceptance: number;
  nominalBunchPs: number;
}

/** Lorentz factor of an electron of `energyMeV`. */
export function gamma(energyMeV: number): number {
  return energyMeV / ELECTRON_MEV;
}

/** The parameters of a ring of definition `spec` and optics `optics`, for RF voltage `voltMV`. */
export function ringParams(spec: RingSpec, optics: RingOptics, voltMV: number): RingParams {
  const r = optics.radiation;
  const g2 = gamma(spec.energyMeV) ** 2;
  const jx = 1 - r.i4 / r.i2;
  const je = 2 + r.i4 / r.i2;
  const params: RingParams = {
    ...spec,
    circumferenceM: optics.circumferenceM,
    alphaC: optics.alphaC,
    energySpread: Math.sqrt((C_Q * g2 * r.i3) / (je * r.i2)),
    partition: [jx, 1, je],
    dampingMs: [0, 0, 0],
    emittanceNm: [0, 0],
    nominalVoltMV: voltMV,
    nominalAcceptance: 0,
    nominalBunchPs: 0,
  };
  const ex = ((C_Q * g2 * r.i5) / (jx * r.i2)) * 1e9;
  params.emittanceNm = [ex, spec.coupling * ex];
  // τ_i = 2·E·T₀/(J_i·U₀).
  const t0 = optics.circumferenceM / C_LIGHT;
  const u0 = energyLossMeV(params);
  params.dampingMs = params.partition.map((j) => (2 * spec.energyMeV * t0 * 1000) / (j * u0)) as [
    number,
    number,
    number,
  ];
  params.nominalAcceptance = Math.min(spec.momentumAcceptance, rfAcceptance(params, voltMV));
  params.nominalBunchPs = bunchLengthPs(params, voltMV);
  return params;
}

/** Energy loss per turn to synchrotron radiation, MeV: U₀ = 88.5 keV·E[GeV]⁴/ρ[m]. */
export function energyLossMeV(ring: RingSpec, energyMeV = ring.energyMeV): number {
  return (0.0885 * (energyMeV / 1000) ** 4) / ring.bendRadiusM;
}

/** Revolution frequency, Hz, for a circumference in m. */
export function revolutionHz(circumferenceM: number): number {
  return C_LIGHT / circumferenceM;
}

/** RF frequency, MHz: the harmonic number times the revolution frequency. */
export function rfFrequencyMHz(ring: RingParams): number {
  return (ring.harmonic * revolutionHz(ring.circumferenceM)) / 1e6;
}

/**
 * RF momentum acceptance (relative) for a total RF voltage `voltMV`, the
 * bucket's half-height: δ² = U₀/(π·h·α·E)·F(q), F(q) = 2(√(q²−1) −
 * arccos(1/q)), q = V/U₀ (for V ≫ U₀ the stationary bucket's
 * 2eV/(π·h·α·E) = (2ν_s/(h·α))²); 0 when the voltage does not cover the
 * energy loss (q ≤ 1).
 */
export function rfAcceptance(ring: RingParams, voltMV: number): number {
  const u0 = energyLossMeV(ring);
  const q = voltMV / u0;
  if (!(q > 1)) return 0;
  const f = 2 * (Math.sqrt(q * q - 1) - Math.acos(1 / q));
  const scale = u0 / (Math.PI * ring.harmonic * ring.alphaC * ring.energyMeV);
  return Math.sqrt(scale * f);
}

/** Synchrotron tune: ν_s = √(h·α·√(V² − U₀²)/(2π·E)); 0 when V ≤ U₀. */
export function synchrotronTune(ring: RingParams, voltMV: number): number {
  const u0 = energyLossMeV(ring);
  if (!(voltMV > u0)) return 0;
  const vcos = Math.sqrt(voltMV * voltMV - u0 * u0);
  return Math.sqrt((ring.harmonic * ring.alphaC * vcos) / (2 * Math.PI * ring.energyMeV));
}

/** Natural rms bunch length, ps: σ_t = α·σ_δ/(2π·ν_s·f_rev); Infinity without a bucket. */
export function bunchLengthPs(ring: RingParams, voltMV: number): number {
  const nus = synchrotronTune(ring, voltMV);
  if (nus === 0) return Infinity;
  const frev = revolutionHz(ring.circumferenceM);
  return ((ring.alphaC * ring.energySpread) / (2 * Math.PI * nus * frev)) * 1e12;
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
  /** Total (vector-summed) RF voltage, MV. */
  voltMV: number;
  /** Smallest transverse aperture margin over the beam size, σ units [H, V]. */
  apertureSigma: readonly [number, number];
  /** Transverse acceptance left by the closed orbit over the design one (0–1], vertical. */
  acceptanceRatio: number;
  /** Momentum acceptance the physical aperture leaves where there is dispersion. */
  physicalAcceptance: number;
}

/** The lifetime and its parts, in hours (Infinity for a part that does not limit). */
export interface Lifetime {
  totalH: number;
  gasH: number;
  touschekH: number;
  quantumH: number;
  /** The momentum acceptance used: min(RF, dynamic, physical). */
  acceptance: number;
  /** Bunch length used, ps. */
  bunchPs: number;
}

/**
 * Beam lifetime: 1/τ = 1/τ_gas + 1/τ_Touschek + 1/τ_quantum. Gas scattering
 * ∝ 1/P, its elastic part also ∝ the transverse acceptance left by the orbit;
 * Touschek ∝ σ_z·δ_acc³/I (the bunch's volume and the acceptance, per
 * particle), scaled from its value at the nominal current, voltage and
 * acceptance; quantum lifetimes from the RF bucket (longitudinal) and the
 * transverse aperture margin.
 */
export function ringLifetime(ring: RingParams, x: LifetimeInputs): Lifetime {
  const acceptance = Math.min(
    ring.momentumAcceptance,
    rfAcceptance(ring, x.voltMV),
    x.physicalAcceptance,
  );
  const f = ring.elasticGasFraction;
  const elastic = f / Math.max(1e-9, Math.min(1, x.acceptanceRatio)) + (1 - f);
  const gasH = ring.gasLifetimeH / Math.max(1e-9, x.pressureRatio * elastic);
  const bunchPs = bunchLengthPs(ring, x.voltMV);
  const touschekH = x.currentMA > 0 && Number.isFinite(bunchPs)
    ? ring.touschekLifetimeH * (ring.targetMA / x.currentMA) *
      (acceptance / ring.nominalAcceptance) ** 3 * (bunchPs / ring.nominalBunchPs)
    : Infinity;
  const [dx, dy, ds] = ring.dampingMs;
  const xiL = acceptance ** 2 / (2 * ring.energySpread ** 2);
  const parts = [
    quantumLifetimeS(ds, xiL),
    quantumLifetimeS(dx, x.apertureSigma[0] ** 2 / 2),
    quantumLifetimeS(dy, x.apertureSigma[1] ** 2 / 2),
  ];
  const quantumS = 1 / parts.reduce((sum, p) => sum + 1 / p, 0);
  const quantumH = quantumS / 3600;
  const totalH = 1 / (1 / gasH + 1 / touschekH + 1 / quantumH);
  return { totalH, gasH, touschekH, quantumH, acceptance, bunchPs };
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
