/**
 * Incident signatures: time-windowed changes applied on top of a device's
 * normal value. The same effects drive live reads, the archive and the alarm
 * log, which is what keeps the three consistent.
 *
 * @module
 */

/** One incident's mark on one device. Times are epoch milliseconds. */
export type Effect =
  /** Multiply by `level` in [from, to), then ramp back to 1 over `recoverMs`. */
  | { kind: "scale"; device: string; from: number; to: number; level: number; recoverMs: number }
  /** Climb quadratically from the normal value to `peak` over [from, to). */
  | { kind: "rise"; device: string; from: number; to: number; peak: number }
  /** Multiply by `factor` at `from`, relaxing back with time constant `tauMs`. */
  | { kind: "spike"; device: string; from: number; factor: number; tauMs: number }
  /** Add `delta` with linear ramps of `rampMs` at both ends of [from, to). */
  | { kind: "add"; device: string; from: number; to: number; delta: number; rampMs: number }
  /** Exponential decay in [from, to), then linear recovery over `recoverMs`. */
  | { kind: "decay"; device: string; from: number; to: number; tauMs: number; recoverMs: number }
  /** Replace an enum value by `label` in [from, to). */
  | { kind: "label"; device: string; from: number; to: number; label: string }
  /** Add `delta` × (t − from)/(to − from) in [from, to): a slow drift that a correction ends at `to`. */
  | { kind: "drift"; device: string; from: number; to: number; delta: number }
  /**
   * A setpoint's device stops following it in [from, to): its output (what
   * the readback reads and the beam feels) holds at `value`, or where it was
   * at `from`. The setpoint itself still reads what was written.
   */
  | { kind: "hold"; device: string; from: number; to: number; value?: number };

/** When the effect no longer changes the value (exclusive). */
export function effectEnd(effect: Effect): number {
  switch (effect.kind) {
    case "scale":
    case "decay":
      return effect.to + effect.recoverMs;
    case "add":
      return effect.to + effect.rampMs;
    case "spike":
      return effect.from + 7 * effect.tauMs;
    case "rise":
    case "label":
    case "drift":
    case "hold":
      return effect.to;
  }
}

/** True when the effect changes the value at time `t`. */
export function effectActive(effect: Effect, t: number): boolean {
  return t >= effect.from && t < effectEnd(effect);
}

/** Applies one effect to a value at time `t` (callers check `effectActive`). */
export function applyEffect(effect: Effect, value: number | string, t: number): number | string {
  if (effect.kind === "label") return effect.label;
  if (effect.kind === "hold" || typeof value !== "number") return value;
  switch (effect.kind) {
    case "scale":
      return value * ramp(effect.level, t, effect.to, effect.recoverMs);
    case "rise": {
      const f = (t - effect.from) / (effect.to - effect.from);
      return value + (effect.peak - value) * f * f;
    }
    case "spike":
      return value * (1 + (effect.factor - 1) * Math.exp(-(t - effect.from) / effect.tauMs));
    case "add": {
      const up = Math.min(1, (t - effect.from) / effect.rampMs);
      const down = t < effect.to ? 1 : 1 - (t - effect.to) / effect.rampMs;
      return value + effect.delta * Math.max(0, Math.min(up, down));
    }
    case "drift":
      return value + (effect.delta * (t - effect.from)) / (effect.to - effect.from);
    case "decay": {
      const end = Math.exp(-(effect.to - effect.from) / effect.tauMs);
      if (t < effect.to) return value * Math.exp(-(t - effect.from) / effect.tauMs);
      return value * ramp(end, t, effect.to, effect.recoverMs);
    }
  }
}

/** `level` before `start`, rising linearly to 1 over `durationMs`. */
function ramp(level: number, t: number, start: number, durationMs: number): number {
  if (t < start) return level;
  return level + (1 - level) * Math.min(1, (t - start) / durationMs);
}

/** What the alarm log needs of anything that changes signals: an incident or a routine action. */
export interface Happening {
  readonly id: string;
  /** First moment any effect applies. */
  readonly start: number;
  /** When every effect is over. */
  readonly end: number;
  readonly effects: readonly Effect[];
  /** Devices whose alarms follow from the effects without being changed directly. */
  readonly watch: readonly string[];
}
