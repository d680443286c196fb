/**
 * How devices follow their setpoints in time: a power supply or drive moves
 * at a finite slew rate, and a temperature relaxes towards its new level with
 * a first-order lag. Both are pure functions of the write history, so live
 * reads and the archive agree.
 *
 * @module
 */

import type { Change } from "./setpoints.ts";

/** Moves `from` towards `to` by at most `distance`. */
function move(from: number, to: number, distance: number): number {
  if (Math.abs(to - from) <= distance) return to;
  return from + Math.sign(to - from) * distance;
}

/**
 * Where a device that slews at `ratePerS` stands `dtMs` after it set off,
 * settled, from `from` towards `to`.
 */
export function slewedStep(from: number, to: number, ratePerS: number, dtMs: number): number {
  return move(from, to, (ratePerS * Math.max(0, dtMs)) / 1000);
}

const starts = new WeakMap<readonly Change[], { length: number; at: number[] }>();

/**
 * The position at time `t` (epoch ms) of a device that slews at `ratePerS`
 * towards each written value in turn, starting settled at `initial`.
 */
export function slewed(
  initial: number,
  changes: readonly Change[],
  ratePerS: number,
  t: number,
): number {
  if (changes.length === 0 || t < (changes[0]?.t ?? Infinity)) return initial;
  // Position at each change time, computed once per history length.
  let memo = starts.get(changes);
  if (memo === undefined || memo.length !== changes.length) {
    const at: number[] = [];
    let x = initial;
    let target = initial;
    let last = changes[0]?.t ?? 0;
    for (const change of changes) {
      x = move(x, target, (ratePerS * (change.t - last)) / 1000);
      at.push(x);
      target = typeof change.value === "number" ? change.value : target;
      last = change.t;
    }
    memo = { length: changes.length, at };
    starts.set(changes, memo);
  }
  let lo = 0;
  let hi = changes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((changes[mid]?.t ?? Infinity) <= t) lo = mid + 1;
    else hi = mid;
  }
  const k = lo - 1;
  const change = changes[k] as Change;
  const target = typeof change.value === "number" ? change.value : initial;
  return move(memo.at[k] ?? initial, target, (ratePerS * (t - change.t)) / 1000);
}

/** Time (ms) a slewing device needs to cover `distance` at `ratePerS`. */
export function slewTimeMs(distance: number, ratePerS: number): number {
  return (Math.abs(distance) / ratePerS) * 1000;
}

/**
 * First-order lag with time constant `tauS` of a level that steps to
 * `level(value)` at each change: y = level₀ + Σ Δlevelₖ·(1 − e^(−(t−tₖ)/τ)).
 */
export function lagged(
  initialLevel: number,
  changes: readonly Change[],
  level: (value: number | string) => number,
  tauS: number,
  t: number,
): number {
  let y = initialLevel;
  let previous = initialLevel;
  for (const change of changes) {
    if (change.t > t) break;
    const next = level(change.value);
    y += (next - previous) * (1 - Math.exp(-(t - change.t) / (tauS * 1000)));
    previous = next;
  }
  return y;
}

/** Points of the exponential kernel of {@link laggedSignal}, and their time grid. */
const LAG_POINTS = 12;
const LAG_GRID_MS = 5000;

/**
 * A signal `f` seen through a first-order lag of `tauS` seconds at `t`:
 * ∫ f(t−u)·e^(−u/τ)/τ du over five time constants, as a midpoint sum. The
 * most recent twelfth of τ is summed on three exact intervals (a step a few
 * seconds old shows as a few per cent), the rest on {@link LAG_POINTS}
 * points of a fixed time grid, so reads close in time share them.
 */
export function laggedSignal(tauS: number, t: number, f: (u: number) => number): number {
  const tau = tauS * 1000;
  const span = 5 * tau;
  const recent = tau / 12;
  let sum = 0;
  const edges = [0, recent / 4, recent / 2, recent];
  for (let k = 0; k + 1 < edges.length; k++) {
    const a = edges[k] ?? 0;
    const b = edges[k + 1] ?? 0;
    sum += (Math.exp(-a / tau) - Math.exp(-b / tau)) * f(Math.round(t - (a + b) / 2));
  }
  for (let k = 0; k < LAG_POINTS; k++) {
    const a = recent + ((span - recent) * k) / LAG_POINTS;
    const b = recent + ((span - recent) * (k + 1)) / LAG_POINTS;
    const w = Math.exp(-a / tau) - Math.exp(-b / tau);
    sum += w * f(Math.round((t - (a + b) / 2) / LAG_GRID_MS) * LAG_GRID_MS);
  }
  return sum + Math.exp(-span / tau) * f(Math.round((t - span) / LAG_GRID_MS) * LAG_GRID_MS);
}
