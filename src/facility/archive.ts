/**
 * The simulated archiver. Samples sit on a per-device period aligned to the
 * epoch, so a given device and time has the same value whatever range is
 * asked for. Long ranges are binned like the Archiver Appliance's `mean_N`,
 * each bin averaged from a bounded number of sub-samples so a year costs the
 * same as a day.
 *
 * @module
 */

import {
  type Sample,
  type Series,
  type Severity,
  SEVERITY_ORDER,
  type Value,
} from "../control/records.ts";
import type { DeviceDef } from "./facility.ts";
import type { Physics, Setpoints } from "./physics.ts";

/** Points per series when the query gives no `maxPoints`. */
export const DEFAULT_MAX_POINTS = 1000;
const MAX_POINTS_CAP = 100_000;
/** Raw samples averaged per bin, at most. */
export const MAX_SUBSAMPLES = 12;

/**
 * The archived series of one known device over [from, to), stopping at
 * `now`: nothing is archived in the future.
 */
export function archiveSeries(
  physics: Physics,
  sp: Setpoints,
  def: DeviceDef,
  from: number,
  until: number,
  maxPoints = DEFAULT_MAX_POINTS,
  now = Infinity,
): Series {
  const to = Math.min(until, now + 1);
  const series: Series = { device: def.name, units: def.info.units, samples: [], ok: true };
  if (def.info.type === "waveform") {
    return { ...series, ok: false, error: `${def.name} is a waveform and is not archived` };
  }
  const limit = Math.min(MAX_POINTS_CAP, Math.max(1, Math.floor(maxPoints)));
  const period = def.periodMs;
  const first = Math.ceil(from / period) * period;
  const raw = first < to ? Math.floor((to - 1 - first) / period) + 1 : 0;
  const point = (t: number): Sample => {
    const value = physics.value(def, t, sp) as number | string;
    // INVALID without a beam, as a live read says it.
    return {
      time: new Date(t).toISOString(),
      value,
      severity: physics.alarm(def, t, sp, value).severity,
    };
  };
  if (raw <= limit) {
    for (let i = 0; i < raw; i++) series.samples.push(point(first + i * period));
    return series;
  }
  // Bins are a whole number of periods aligned to the epoch (so a bin's value does not
  // depend on the range asked), sized so that at most `limit` of them cover [from, to).
  const bins = (w: number) => Math.floor((to - 1) / w) - Math.floor(from / w) + 1;
  let width = Math.ceil((to - from) / Math.max(1, limit - 2) / period) * period;
  for (let i = 0; i < 64 && bins(width) > limit; i++) width *= 2; // only for limit < 3
  for (let b = Math.floor(from / width); b * width < to && series.samples.length < limit; b++) {
    const lo = Math.max(b * width, from);
    const hi = Math.min((b + 1) * width, to);
    const bin = binned(physics, sp, def, lo, hi);
    if (bin !== undefined) series.samples.push(bin);
  }
  return series;
}

function binned(
  physics: Physics,
  sp: Setpoints,
  def: DeviceDef,
  lo: number,
  hi: number,
): Sample | undefined {
  const period = def.periodMs;
  const first = Math.ceil(lo / period) * period;
  if (first >= hi) return undefined;
  const raw = Math.floor((hi - 1 - first) / period) + 1;
  const n = Math.min(raw, MAX_SUBSAMPLES);
  let sum = 0;
  let worst: Severity = "NONE";
  let label: string | undefined;
  let labelRank = -1;
  for (let i = 0; i < n; i++) {
    const t = first + Math.floor(((i + 0.5) * raw) / n) * period;
    const value: Value = physics.value(def, t, sp);
    const severity = physics.alarm(def, t, sp, value).severity;
    const rank = SEVERITY_ORDER.indexOf(severity);
    if (rank > SEVERITY_ORDER.indexOf(worst)) worst = severity;
    if (typeof value === "number") sum += value;
    else if (rank > labelRank) {
      // For states, show the most severe one the bin saw: a trip must not average away.
      label = String(value);
      labelRank = rank;
    }
  }
  return { time: new Date(lo).toISOString(), value: label ?? sum / n, severity: worst };
}
