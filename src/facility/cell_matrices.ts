/**
 * The transfer matrices of the storage ring's cell (`ring_lattice.ts`): its
 * elements (drifts, thick quadrupoles, sector bends) cut at every magnet edge,
 * each element's matrix and dispersion source, the periodic Twiss functions
 * and phase advance of the cell, and the matching of the focusing and
 * defocusing quadrupole families to the phase advances the tunes ask for.
 *
 * @module
 */

import type { RingCellSpec } from "./ring_lattice.ts";

const TWO_PI = 2 * Math.PI;

export type M2 = [number, number, number, number];
export interface Element {
  readonly from: number;
  readonly to: number;
  readonly kind: "drift" | "quad" | "bend";
  readonly k: number;
}

/** Transfer matrix [m11, m12, m21, m22] of a slice of length `l` with focusing `k` (1/m²). */
export function slice(k: number, l: number): M2 {
  if (Math.abs(k) < 1e-12) return [1, l, 0, 1];
  if (k > 0) {
    const w = Math.sqrt(k);
    return [Math.cos(w * l), Math.sin(w * l) / w, -w * Math.sin(w * l), Math.cos(w * l)];
  }
  const w = Math.sqrt(-k);
  return [Math.cosh(w * l), Math.sinh(w * l) / w, w * Math.sinh(w * l), Math.cosh(w * l)];
}

/** The dispersion source (D, D') of a slice of a sector bend of radius ρ and length l. */
export function bendSource(rho: number, l: number): [number, number] {
  const h = 1 / rho;
  return [rho * (1 - Math.cos(l * h)), Math.sin(l * h)];
}

export function elements(spec: RingCellSpec, k: Map<string, number>, rho: number): Element[] {
  const parts: { from: number; to: number; kind: Element["kind"]; k: number }[] = [];
  const L = spec.cellLengthM;
  const place = (centre: number, length: number, kind: Element["kind"], strength: number) => {
    const a = centre - length / 2;
    const b = centre + length / 2;
    // A magnet across the cell boundary is cut in two: the cell stays periodic.
    if (a < 0) {
      parts.push({ from: 0, to: b, kind, k: strength });
      parts.push({ from: L + a, to: L, kind, k: strength });
    } else if (b > L) {
      parts.push({ from: a, to: L, kind, k: strength });
      parts.push({ from: 0, to: b - L, kind, k: strength });
    } else parts.push({ from: a, to: b, kind, k: strength });
  };
  for (const q of spec.quads) {
    for (const at of q.atM) place(at, q.lengthM, "quad", k.get(q.family) ?? 0);
  }
  const angle = TWO_PI / (spec.cells * spec.dipolesAtM.length);
  for (const at of spec.dipolesAtM) place(at, rho * angle, "bend", 1 / (rho * rho));
  parts.sort((a, b) => a.from - b.from);
  const out: Element[] = [];
  let s = 0;
  for (const p of parts) {
    if (p.from < s - 1e-9) throw new Error(`Ring cell: magnets overlap at ${p.from.toFixed(3)} m`);
    if (p.from > s) out.push({ from: s, to: p.from, kind: "drift", k: 0 });
    out.push(p);
    s = p.to;
  }
  if (s < L) out.push({ from: s, to: L, kind: "drift", k: 0 });
  return out;
}

/** Focusing of an element in a plane: quadrupoles ±K, bends h² horizontally. */
export function focusing(e: Element, plane: number): number {
  if (e.kind === "quad") return plane === 0 ? e.k : -e.k;
  if (e.kind === "bend") return plane === 0 ? e.k : 0;
  return 0;
}

export function mul(a: M2, b: M2): M2 {
  return [
    a[0] * b[0] + a[1] * b[2],
    a[0] * b[1] + a[1] * b[3],
    a[2] * b[0] + a[3] * b[2],
    a[2] * b[1] + a[3] * b[3],
  ];
}

/** Periodic β, α at the cell start, or undefined when the cell is unstable in that plane. */
export function periodic(
  els: readonly Element[],
  plane: number,
): { beta: number; alpha: number } | undefined {
  let m: M2 = [1, 0, 0, 1];
  for (const e of els) m = mul(slice(focusing(e, plane), e.to - e.from), m);
  const c = (m[0] + m[3]) / 2;
  if (!(Math.abs(c) < 1)) return undefined;
  const sin = Math.sign(m[1]) * Math.sqrt(1 - c * c);
  return { beta: m[1] / sin, alpha: (m[0] - m[3]) / (2 * sin) };
}

/** Phase advance over the cell (rad), unwrapped, or NaN when unstable. */
export function cellPhase(els: readonly Element[], plane: number): number {
  const t = periodic(els, plane);
  if (t === undefined) return NaN;
  let { beta, alpha } = t;
  let mu = 0;
  for (const e of els) {
    const [m11, m12, m21, m22] = slice(focusing(e, plane), e.to - e.from);
    mu += Math.atan2(m12, beta * m11 - alpha * m12);
    const gamma = (1 + alpha * alpha) / beta;
    const b = m11 * m11 * beta - 2 * m11 * m12 * alpha + m12 * m12 * gamma;
    alpha = -m11 * m21 * beta + (m11 * m22 + m12 * m21) * alpha - m12 * m22 * gamma;
    beta = b;
  }
  return mu;
}

/**
 * Scales the "F" and "D" quadrupole families (Newton's method on the two
 * phase advances per cell) until the cell gives `target` (rad) [H, V].
 */
export function match(spec: RingCellSpec, rho: number, target: readonly [number, number]) {
  const k = new Map(spec.quads.map((q) => [q.family, q.k1 ?? 0]));
  const knobs = ["F", "D"].map((m) => spec.quads.filter((q) => q.match === m).map((q) => q.family));
  if (knobs.some((f) => f.length === 0)) {
    throw new Error('Ring cell: match needs quadrupole families marked "F" and "D"');
  }
  const phases = (kk: Map<string, number>) => {
    const els = elements(spec, kk, rho);
    return [cellPhase(els, 0), cellPhase(els, 1)];
  };
  const scaled = (f: number, d: number) => {
    const out = new Map(k);
    for (const name of knobs[0] ?? []) out.set(name, (k.get(name) ?? 0) * f);
    for (const name of knobs[1] ?? []) out.set(name, (k.get(name) ?? 0) * d);
    return out;
  };
  let f = 1;
  let d = 1;
  for (let i = 0; i < 50; i++) {
    const [px = NaN, py = NaN] = phases(scaled(f, d));
    const ex = px - target[0];
    const ey = py - target[1];
    if (!Number.isFinite(ex) || !Number.isFinite(ey)) {
      throw new Error("Ring cell: unstable while matching the tunes; check the quadrupoles");
    }
    if (Math.abs(ex) < 1e-12 && Math.abs(ey) < 1e-12) return scaled(f, d);
    const h = 1e-6;
    const [fx = NaN, fy = NaN] = phases(scaled(f + h, d));
    const [dx = NaN, dy = NaN] = phases(scaled(f, d + h));
    const a = (fx - px) / h;
    const b = (dx - px) / h;
    const c = (fy - py) / h;
    const e = (dy - py) / h;
    const det = a * e - b * c;
    if (!(Math.abs(det) > 0)) throw new Error("Ring cell: the tunes cannot be matched");
    f -= (e * ex - b * ey) / det;
    d -= (-c * ex + a * ey) / det;
  }
  throw new Error("Ring cell: matching the tunes did not converge");
}
