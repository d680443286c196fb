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
