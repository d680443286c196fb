/**
 * What a prediction keeps of the watched devices along the plan's path:
 * every sample's values, each device's furthest and last value, and every
 * sample where a device is worse than before the plan (an escalation, which
 * the simulator's prediction then checks against the machine without the
 * plan). Shared by both response models, so they rank, judge and report
 * the same way.
 *
 * @module
 */
import type { AlarmLimits, Severity } from "../../adapters/adapter.ts";
import type { ObservationPlan, PredictedDevice } from "../../plan_model/prediction.ts";
import { severityRank } from "../../plan_model/prediction.ts";

/** A watched device: its units, the noise of one reading (σ, 0 unknown) and its alarm limits. */
export interface Watched {
  device: string;
  units: string;
  noise: number;
  alarm?: AlarmLimits;
  /**
   * A written device's own readback, temperature or status: it follows the
   * write the table shows already, so it is listed only when it gets worse.
   */
  own?: boolean;
}

/** The watched devices' readings at one time, index for index. */
export interface Reads {
  values: (number | null)[];
  severity: Severity[];
  status: string[];
}

/** Where and when a sample was taken. */
export interface SampleMeta {
  label: string;
  /** The executor compares at this key (actions only). */
  key?: string;
  /** Time on the model's clock (ms), for the machine without the plan. */
  time: number;
  /** Part of what follows the actions. */
  after: boolean;
}

interface Escalation {
  sample: number;
  severity: Severity;
  status: string;
  value: number | null;
}

/** A device changing by this many times its noise counts as having moved. */
const MOVED_SIGMAS = 3;
/** A device without a threshold in its direction counts this many times its noise as its band. */
const BAND_SIGMAS = 100;

export class Tracker {
  readonly samples: (SampleMeta & { values: Float64Array })[] = [];
  readonly #start: Float64Array;
  readonly #extreme: Float64Array;
  readonly #end: Float64Array;
  readonly #escalations = new Map<number, Escalation[]>();

  constructor(readonly watched: Watched[], readonly start: Reads) {
    this.#start = Float64Array.from(start.values, (v) => v ?? NaN);
    this.#extreme = Float64Array.from(this.#start);
    this.#end = Float64Array.from(this.#start);
  }

  /** Records one sample of every watched device. */
  record(meta: SampleMeta, reads: Reads): void {
    const n = this.watched.length;
    const values = new Float64Array(n);
    const index = this.samples.length;
    for (let i = 0; i < n; i++) {
      const v = reads.values[i] ?? null;
      values[i] = v ?? NaN;
      this.#end[i] = v ?? NaN;
      const s0 = this.#start[i] as number;
      const ext = this.#extreme[i] as number;
      if (
        v !== null && !Number.isNaN(s0) &&
        (Number.isNaN(ext) || Math.abs(v - s0) > Math.abs(ext - s0))
      ) {
        this.#extreme[i] = v;
      }
      const severity = reads.severity[i] ?? "NONE";
      if (severityRank(severity) > severityRank(this.start.severity[i] ?? "NONE")) {
        const list = this.#escalations.get(i) ?? [];
        list.push({ sample: index, severity, status: reads.status[i] ?? "", value: v });
        this.#escalations.set(i, list);
      }
    }
    this.samples.push({ ...meta, values });
  }

  /** The devices worse than before the plan, by sample. */
  escalations(): Map<number, number[]> {
    const bySample = new Map<number, number[]>();
    for (const [device, list] of this.#escalations) {
      for (const e of list) bySample.set(e.sample, [...(bySample.get(e.sample) ?? []), device]);
    }
    return bySample;
  }

  /**
   * Forgets an escalation the machine would have without the plan too
   * (`baseline` at least as bad at that sample): the plan did not cause it.
   */
  discount(sample: number, device: number, baseline: Severity): void {
    const list = this.#escalations.get(device);
    if (!list) return;
    const kept = list.filter((e) =>
      e.sample !== sample || severityRank(e.severity) > severityRank(baseline)
    );
    if (kept.length) this.#escalations.set(device, kept);
    else this.#escalations.delete(device);
  }

  /** The worst escalation of a device (earliest of the worst), if any. */
  worstOf(i: number): Escalation | undefined {
    let worst: Escalation | undefined;
    for (const e of this.#escalations.get(i) ?? []) {
      if (!worst || severityRank(e.severity) > severityRank(worst.severity)) worst = e;
    }
    return worst;
  }

  /** The worst severity the plan brings any device to (NONE: none is worse than before). */
  worst(): Severity {
    let worst: Severity = "NONE";
    for (let i = 0; i < this.watched.length; i++) {
      const w = this.worstOf(i);
      if (w && severityRank(w.severity) > severityRank(worst)) worst = w.severity;
    }
    return worst;
  }

  /** Device `i` as the prediction reports it. */
  device(i: number): PredictedDevice {
    const w = this.watched[i] as Watched;
    const start = num(this.#start[i]), extreme = num(this.#extreme[i]);
    const worst = this.worstOf(i);
    const limit = worst ? limitOf(w.alarm, worst.status) : undefined;
    return {
      device: w.device,
      units: w.units,
      start,
      extreme,
      end: num(this.#end[i]),
      startSeverity: this.start.severity[i] ?? "NONE",
      worst: worst?.severity ?? "NONE",
      ...(worst
        ? {
          status: worst.status,
          ...(limit !== undefined ? { limit } : {}),
          at: this.samples[worst.sample]?.label,
          value: worst.value,
        }
        : {}),
      score: score(w, start, extreme),
    };
  }

  /** The devices that moved beyond their noise or got worse: worst first, then furthest. */
  moved(max: number): PredictedDevice[] {
    const out: PredictedDevice[] = [];
    for (let i = 0; i < this.watched.length; i++) {
      const d = this.device(i);
      const noise = this.watched[i]?.noise ?? 0;
      const delta = d.start !== null && d.extreme !== null ? Math.abs(d.extreme - d.start) : 0;
      if (d.worst !== "NONE") out.push(d);
      else if (!this.watched[i]?.own && delta > MOVED_SIGMAS * noise && delta > 0) out.push(d);
    }
    out.sort((a, b) => severityRank(b.worst) - severityRank(a.worst) || b.score - a.score);
    return out.slice(0, max);
  }

  /**
   * The devices worth comparing while the plan runs: a number before the
   * plan and a predicted change over the actions beyond twice `floor(i)`,
   * largest change against its floor first.
   */
  observable(max: number, floor: (i: number) => number): number[] {
    const keyed = this.samples.filter((s) => s.key !== undefined && !s.after);
    const ranked: { i: number; ratio: number }[] = [];
    for (let i = 0; i < this.watched.length; i++) {
      const s0 = this.#start[i] as number;
      const f = floor(i);
      if (Number.isNaN(s0) || !(f > 0)) continue;
      let delta = 0;
      for (const s of keyed) {
        const v = s.values[i] as number;
        if (!Number.isNaN(v)) delta = Math.max(delta, Math.abs(v - s0));
      }
      if (delta > 2 * f) ranked.push({ i, ratio: delta / f });
    }
    ranked.sort((a, b) => b.ratio - a.ratio);
    return ranked.slice(0, max).map((r) => r.i);
  }

  /** What the executor compares: the predicted change of `devices` at each keyed sample of the actions. */
  observationPlan(
    devices: number[],
    floors: number[],
    relative: number,
  ): ObservationPlan | undefined {
    if (!devices.length) return undefined;
    const steps: Record<string, (number | null)[]> = {};
    for (const s of this.samples) {
      if (s.key === undefined || s.after) continue;
      steps[s.key] = devices.map((i) => {
        const v = s.values[i] as number, s0 = this.#start[i] as number;
        return Number.isNaN(v) || Number.isNaN(s0) ? null : v - s0;
      });
    }
    return {
      devices: devices.map((i) => this.watched[i]?.device ?? ""),
      units: devices.map((i) => this.watched[i]?.units ?? ""),
      steps,
      floors,
      relative,
    };
  }
}

function num(v: number | undefined): number | null {
  return v === undefined || Number.isNaN(v) ? null : v;
}

/** The threshold an alarm status names, from the device's limits. */
function limitOf(alarm: AlarmLimits | undefined, status: string): number | undefined {
  switch (status) {
    case "HIHI":
      return alarm?.hihi;
    case "HIGH":
      return alarm?.high;
    case "LOW":
      return alarm?.low;
    case "LOLO":
      return alarm?.lolo;
  }
  return undefined;
}

/**
 * How much of the way to its nearest threshold in the direction it moves
 * the plan takes a device (1: there); without such a threshold, its change
 * against {@link BAND_SIGMAS} times its noise.
 */
function score(w: Watched, start: number | null, extreme: number | null): number {
  if (start === null || extreme === null || extreme === start) return 0;
  const delta = Math.abs(extreme - start);
  const up = extreme > start;
  const limit = up ? w.alarm?.high ?? w.alarm?.hihi : w.alarm?.low ?? w.alarm?.lolo;
  const headroom = limit === undefined ? undefined : up ? limit - start : start - limit;
  if (headroom !== undefined && headroom > 0) return delta / headroom;
  if (headroom !== undefined) return 1 + delta; // already past it, and going further
  return w.noise > 0 ? delta / (BAND_SIGMAS * w.noise) : 0;
}
