/**
 * The storage ring's linear optics from its magnets: one periodic cell of
 * sector dipoles, thick quadrupoles and thin sextupoles, repeated around the
 * ring. Transfer matrices give the periodic β, α, dispersion η and η', the
 * phase advance per cell (so the tunes), the momentum compaction
 * α_c = (1/C)∮η/ρ ds, the radiation integrals (energy spread, emittance,
 * damping partition) and the natural and sextupole chromaticity. The
 * focusing and defocusing quadrupole families are matched at build time so
 * the ring has the tunes of its definition: the quadrupole strengths and the
 * tunes are one thing.
 *
 * @module
 */

import {
  bendSource,
  type Element,
  elements,
  focusing,
  type M2,
  match,
  mul,
  periodic,
  slice,
} from "./cell_matrices.ts";

/** One family's magnets in a cell: where they sit and how strong they are at the initial current. */
export interface CellMagnetSpec {
  /** Device prefix of the family's power supply, e.g. `RING:Q1`. */
  family: string;
  /** Centres of the family's magnets in one cell, m. */
  atM: number[];
  lengthM: number;
  /** Quadrupoles: normalised gradient at the initial current, 1/m² (positive focuses horizontally). */
  k1?: number;
  /** Quadrupoles matched to the tunes: "F" (focusing) or "D" (defocusing) knob. */
  match?: string;
  /** Sextupoles: the plane whose chromaticity the family mainly corrects ("H" or "V"). */
  corrects?: string;
}

/** The ring's cell as written in `configs/devices/facility.json`. */
export interface RingCellSpec {
  cells: number;
  /** Cells whose magnets the families power (the catalogue's; default: every cell). */
  familyCells?: number;
  cellLengthM: number;
  /** Centres of the dipoles in one cell, m; each bends 2π/(cells·dipoles). */
  dipolesAtM: number[];
  quads: CellMagnetSpec[];
  sextupoles: CellMagnetSpec[];
  /** Linear chromaticity the sextupoles are set to at their initial currents [H, V]. */
  chromaticity: number[];
}

/** One magnet of a family in the cell, with the optics at its centre. */
export interface CellMagnet {
  readonly family: string;
  /** Centre in the cell, m. */
  readonly s: number;
  readonly lengthM: number;
  /** Quadrupoles: K1 at the initial current, 1/m²; sextupoles: K2·L at the initial current, 1/m². */
  readonly strength: number;
  readonly beta: readonly [number, number];
  readonly eta: number;
}

/** Radiation integrals of the whole ring (I1 m, I2 1/m, I3 1/m², I4 1/m, I5 1/m). */
export interface RadiationIntegrals {
  readonly i1: number;
  readonly i2: number;
  readonly i3: number;
  readonly i4: number;
  readonly i5: number;
}

/** The ring's optics, periodic with the cell. */
export interface RingOptics {
  readonly cells: number;
  readonly cellLengthM: number;
  readonly circumferenceM: number;
  readonly bendRadiusM: number;
  /** Tunes (integer and fraction) [H, V] with the initial settings. */
  readonly tunes: readonly [number, number];
  /** Phase advance per cell [H, V], rad. */
  readonly cellPhase: readonly [number, number];
  readonly alphaC: number;
  readonly radiation: RadiationIntegrals;
  /** −(1/4π)∮β(K + h²)ds [H] and +(1/4π)∮βK ds [V]. */
  readonly naturalChromaticity: readonly [number, number];
  /** Quadrupoles of one cell, matched. */
  readonly quads: readonly CellMagnet[];
  /** Sextupoles of one cell, strengths set for the chromaticity of the definition. */
  readonly sextupoles: readonly CellMagnet[];
  /** Optics at `s` (m) along the ring: β, α, phase, η, η' [per plane where two]. */
  at(s: number): RingPoint;
}

/** The optics at one point of the ring. */
export interface RingPoint {
  readonly beta: readonly [number, number];
  readonly alpha: readonly [number, number];
  readonly phase: readonly [number, number];
  readonly eta: number;
  readonly etaPrime: number;
}

const STEP_M = 0.005;
const TWO_PI = 2 * Math.PI;

/**
 * Builds the ring's optics for `tunes` [H, V] (integer and fraction) with
 * dipoles of bending radius `rho` (m). `match` false takes the quadrupoles'
 * `k1` as they are (the tunes are then what they give).
 */
export function buildRingOptics(
  spec: RingCellSpec,
  tunes: readonly [number, number],
  rho: number,
  { match: matched = true }: { match?: boolean } = {},
): RingOptics {
  const target: [number, number] = [TWO_PI * tunes[0] / spec.cells, TWO_PI * tunes[1] / spec.cells];
  const k = matched
    ? match(spec, rho, target)
    : new Map(spec.quads.map((q) => [q.family, q.k1 ?? 0]));
  const els = elements(spec, k, rho);
  const L = spec.cellLengthM;
  // Every element cut into slices of at most STEP_M: the table's points include every magnet edge.
  const slices: { from: number; to: number; e: Element }[] = [];
  for (const e of els) {
    const m = Math.max(1, Math.ceil((e.to - e.from) / STEP_M));
    for (let i = 0; i < m; i++) {
      slices.push({
        from: e.from + ((e.to - e.from) * i) / m,
        to: e.from + ((e.to - e.from) * (i + 1)) / m,
        e,
      });
    }
  }
  const n = slices.length;
  const sAt = new Float64Array(n + 1);
  const table = {
    beta: [new Float64Array(n + 1), new Float64Array(n + 1)],
    alpha: [new Float64Array(n + 1), new Float64Array(n + 1)],
    phase: [new Float64Array(n + 1), new Float64Array(n + 1)],
    eta: new Float64Array(n + 1),
    etaPrime: new Float64Array(n + 1),
  };
  slices.forEach((x, i) => (sAt[i + 1] = x.to));
  const mu: [number, number] = [0, 0];
  const natural: [number, number] = [0, 0];
  for (const plane of [0, 1] as const) {
    const t = periodic(els, plane);
    if (t === undefined) throw new Error("Ring cell: unstable after matching");
    let { beta, alpha } = t;
    let psi = 0;
    const [bt, at, pt] = [table.beta[plane]!, table.alpha[plane]!, table.phase[plane]!];
    bt[0] = beta;
    at[0] = alpha;
    slices.forEach((x, i) => {
      const l = x.to - x.from;
      const kk = focusing(x.e, plane);
      const [m11, m12, m21, m22] = slice(kk, l);
      psi += Math.atan2(m12, beta * m11 - alpha * m12);
      const gamma = (1 + alpha * alpha) / beta;
      const b = m11 * m11 * beta - 2 * m11 * m12 * alpha + m12 * m12 * gamma;
      const before = beta;
      alpha = -m11 * m21 * beta + (m11 * m22 + m12 * m21) * alpha - m12 * m22 * gamma;
      beta = b;
      // Natural chromaticity, −(1/4π)∮β·K ds, with the slice's mean β.
      natural[plane] -= (((before + beta) / 2) * kk * l) / (4 * Math.PI);
      bt[i + 1] = beta;
      at[i + 1] = alpha;
      pt[i + 1] = psi;
    });
    mu[plane] = psi;
  }
  // Periodic dispersion: (η, η') = (I − M)⁻¹·D over the cell, then carried along.
  let m: M2 = [1, 0, 0, 1];
  let d: [number, number] = [0, 0];
  for (const x of slices) {
    const l = x.to - x.from;
    const s = slice(focusing(x.e, 0), l);
    const src = x.e.kind === "bend" ? bendSource(rho, l) : [0, 0];
    d = [s[0] * d[0] + s[1] * d[1] + (src[0] ?? 0), s[2] * d[0] + s[3] * d[1] + (src[1] ?? 0)];
    m = mul(s, m);
  }
  const a11 = 1 - m[0];
  const a12 = -m[1];
  const a21 = -m[2];
  const a22 = 1 - m[3];
  const det = a11 * a22 - a12 * a21;
  let eta = (a22 * d[0] - a12 * d[1]) / det;
  let etaP = (-a21 * d[0] + a11 * d[1]) / det;
  table.eta[0] = eta;
  table.etaPrime[0] = etaP;
  const rad = { i1: 0, i2: 0, i3: 0, i4: 0, i5: 0 };
  slices.forEach((x, i) => {
    const l = x.to - x.from;
    const s = slice(focusing(x.e, 0), l);
    const bend = x.e.kind === "bend";
    const src = bend ? bendSource(rho, l) : [0, 0];
    const e = s[0] * eta + s[1] * etaP + (src[0] ?? 0);
    const eP = s[2] * eta + s[3] * etaP + (src[1] ?? 0);
    if (bend) {
      // Slice means of the integrands (trapezoid).
      const hh = 1 / rho;
      const curly = (j: number, et: number, etp: number) => {
        const beta = table.beta[0]![j]!;
        const alpha = table.alpha[0]![j]!;
        return ((1 + alpha * alpha) / beta) * et * et + 2 * alpha * et * etp + beta * etp * etp;
      };
      const etaMean = (eta + e) / 2;
      rad.i1 += etaMean * hh * l;
      rad.i2 += hh * hh * l;
      rad.i3 += hh * hh * hh * l;
      rad.i4 += etaMean * hh * hh * hh * l; // sector bends: no gradient, no edge terms
      rad.i5 += ((curly(i, eta, etaP) + curly(i + 1, e, eP)) / 2) * hh * hh * hh * l;
    }
    eta = e;
    etaP = eP;
    table.eta[i + 1] = eta;
    table.etaPrime[i + 1] = etaP;
  });
  const cells = spec.cells;
  const C = cells * L;
  const radiation: RadiationIntegrals = {
    i1: rad.i1 * cells,
    i2: rad.i2 * cells,
    i3: rad.i3 * cells,
    i4: rad.i4 * cells,
    i5: rad.i5 * cells,
  };
  const point = (u: number): RingPoint => {
    let lo = 0;
    let hi = n;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((sAt[mid] ?? 0) <= u) lo = mid;
      else hi = mid;
    }
    const span = (sAt[hi] ?? 0) - (sAt[lo] ?? 0);
    const f = span > 0 ? Math.min(1, Math.max(0, (u - (sAt[lo] ?? 0)) / span)) : 0;
    const lerp = (a: Float64Array) => (a[lo] ?? 0) + f * ((a[hi] ?? 0) - (a[lo] ?? 0));
    return {
      beta: [lerp(table.beta[0]!), lerp(table.beta[1]!)],
      alpha: [lerp(table.alpha[0]!), lerp(table.alpha[1]!)],
      phase: [lerp(table.phase[0]!), lerp(table.phase[1]!)],
      eta: lerp(table.eta),
      etaPrime: lerp(table.etaPrime),
    };
  };
  natural[0] *= cells;
  natural[1] *= cells;
  const quads: CellMagnet[] = spec.quads.flatMap((q) =>
    q.atM.map((at) => {
      const p = point(((at % L) + L) % L);
      return {
        family: q.family,
        s: at,
        lengthM: q.lengthM,
        strength: k.get(q.family) ?? 0,
        beta: p.beta,
        eta: p.eta,
      };
    })
  );
  const sextupoles = setSextupoles(spec, point, natural);
  return {
    cells,
    cellLengthM: L,
    circumferenceM: C,
    bendRadiusM: rho,
    tunes: [(mu[0] * cells) / TWO_PI, (mu[1] * cells) / TWO_PI],
    cellPhase: mu,
    alphaC: radiation.i1 / C,
    radiation,
    naturalChromaticity: natural,
    quads,
    sextupoles,
    at(s: number): RingPoint {
      const cell = Math.floor(s / L);
      const u = s - cell * L;
      const p = point(u);
      return {
        ...p,
        phase: [p.phase[0] + cell * mu[0], p.phase[1] + cell * mu[1]],
      };
    },
  };
}

/**
 * Sextupole strengths (K2·L per magnet) that bring the linear chromaticity to
 * the definition's: the families marked "H" share the horizontal correction,
 * those marked "V" the vertical; ξ = ξ₀ ± (1/4π)Σβ·η·K2L.
 */
function setSextupoles(
  spec: RingCellSpec,
  point: (u: number) => RingPoint,
  natural: readonly [number, number],
): CellMagnet[] {
  const L = spec.cellLengthM;
  const at = spec.sextupoles.flatMap((sx) =>
    sx.atM.map((s) => ({ family: sx.family, corrects: sx.corrects, s, lengthM: sx.lengthM }))
  ).map((m) => ({ ...m, p: point(((m.s % L) + L) % L) }));
  // Unit strength in each group: its chromaticity per unit K2L, summed over the ring.
  const per = (group: string, plane: 0 | 1) =>
    at.filter((m) => m.corrects === group).reduce(
      (sum, m) => sum + ((plane === 0 ? 1 : -1) * m.p.beta[plane] * m.p.eta) / (4 * Math.PI),
      0,
    ) * spec.cells;
  const [xi0 = 1, xi1 = 1] = spec.chromaticity;
  const a = per("H", 0);
  const b = per("V", 0);
  const c = per("H", 1);
  const d = per("V", 1);
  const rx = xi0 - natural[0];
  const ry = xi1 - natural[1];
  const det = a * d - b * c;
  if (!(Math.abs(det) > 0)) {
    throw new Error("Ring cell: the sextupoles cannot set the chromaticity");
  }
  const gh = (d * rx - b * ry) / det;
  const gv = (-c * rx + a * ry) / det;
  return at.map((m) => ({
    family: m.family,
    s: m.s,
    lengthM: m.lengthM,
    strength: m.corrects === "H" ? gh : gv,
    beta: m.p.beta,
    eta: m.p.eta,
  }));
}
