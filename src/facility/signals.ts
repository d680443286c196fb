/**
 * What physics reads off a device without the machine's state: alarm
 * thresholds, a fresh day's setpoints, turn-by-turn and probe waveforms, and
 * small value helpers.
 *
 * @module
 */
import type { Severity, Value } from "../control/records.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import { gauss, hashNumbers, uniform } from "./noise.ts";

/** An alarm state. */
export interface Alarm {
  severity: Severity;
  status: string;
}

/** Alarm severity and status of a value against the device's thresholds or enum states. */
export function alarmOf(def: DeviceDef, value: Value | null): Alarm {
  if (typeof value === "string") {
    const severity = def.labelSeverity.get(value) ?? "NONE";
    return { severity, status: severity === "NONE" ? "NO_ALARM" : "STATE" };
  }
  const a = def.info.alarm;
  if (typeof value !== "number" || a === undefined) return { severity: "NONE", status: "NO_ALARM" };
  if (a.hihi !== undefined && value >= a.hihi) return { severity: "MAJOR", status: "HIHI" };
  if (a.lolo !== undefined && value <= a.lolo) return { severity: "MAJOR", status: "LOLO" };
  if (a.high !== undefined && value >= a.high) return { severity: "MINOR", status: "HIGH" };
  if (a.low !== undefined && value <= a.low) return { severity: "MINOR", status: "LOW" };
  return { severity: "NONE", status: "NO_ALARM" };
}

/** The setpoints of a fresh day: each device's initial value, scattered by the seed. */
export function initialSetpoints(facility: Facility, seed: number): Map<string, number | string> {
  const out = new Map<string, number | string>();
  for (const def of facility.devices) {
    if (def.model !== "set") continue;
    const init = def.spec.inits?.[def.prefix] ?? def.spec.init ?? 0;
    if (typeof init === "string") {
      out.set(def.name, init);
      continue;
    }
    const spread = def.spec.initSpread ?? 0;
    const value = init + spread * (2 * uniform(seed, def.key, 0x1417) - 1);
    out.set(def.name, round(value, def.info.precision ?? 3));
  }
  return out;
}

/** A value as a number (0 for anything else). */
export function num(v: Value | null | undefined): number {
  return typeof v === "number" ? v : 0;
}

/** A number moved by `delta`; anything else unchanged. */
export function plus(v: Value, delta: number): Value {
  return typeof v === "number" ? v + delta : v;
}

/** `v` rounded to `digits` decimals. */
export function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/**
 * Turn-by-turn positions: the closed orbit plus a betatron oscillation of
 * `amplitude` (mm) at tune `nu` and starting phase `phase` (rad), decohering
 * over about 120 turns.
 */
export function turnByTurnWave(
  def: DeviceDef,
  seed: number,
  t: number,
  nu: number,
  amplitude: number,
  phase: number,
  closed: number,
  noisy: boolean,
): number[] {
  const sigma = def.spec.sigma ?? 0;
  const out: number[] = [];
  for (let i = 0; i < (def.spec.len ?? 256); i++) {
    const beat = amplitude * Math.exp(-i / 120) * Math.cos(2 * Math.PI * nu * i + phase);
    out.push(closed + beat + (noisy ? sigma * gauss(seed, hashNumbers(def.key, i), t) : 0));
  }
  return out;
}

/** A cavity probe's field envelope, with the klystron power supply's ripple. */
export function probeWave(
  def: DeviceDef,
  seed: number,
  t: number,
  voltage: number,
  noisy: boolean,
): number[] {
  const phase = 2 * Math.PI * uniform(seed, def.key, t, 0x9b0);
  const sigma = def.spec.sigma ?? 0;
  const out: number[] = [];
  for (let i = 0; i < (def.spec.len ?? 256); i++) {
    // Klystron power-supply ripple shows as a slow modulation of the field envelope.
    const ripple = 1 + 0.004 * Math.sin((2 * Math.PI * i) / 64 + phase);
    out.push(voltage * ripple + (noisy ? sigma * gauss(seed, hashNumbers(def.key, i), t) : 0));
  }
  return out;
}
