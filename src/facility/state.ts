/**
 * The only mutable state of the simulator: the history of writes, and the
 * faults added live (a task's starting conditions: a trip, a burst, a failed
 * supply). Keeping the history (not just the last value) lets the archive
 * replay setpoints as they were at any time, so a step written now shows up
 * in trends later. {@link SetpointStore.clone} copies it: the copy runs the
 * same physics from the same past and takes writes of its own.
 *
 * @module
 */

import type { Value } from "../control/records.ts";
import { type Effect, effectActive, type Happening } from "./effects.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import type { Change, PastStep, Setpoints } from "./setpoints.ts";

export type { Change } from "./setpoints.ts";

const NOTHING: ReadonlySet<string> = new Set();

const NO_EFFECTS: readonly Effect[] = [];

/** Writes in time order per device, on top of the initial setpoints. */
export class SetpointStore implements Setpoints {
  private readonly history = new Map<string, Change[]>();
  /** Write times (and fault starts) in the order they arrived. */
  private readonly writeTimes: number[] = [];
  private readonly faultList: Happening[] = [];
  private readonly faultEffects = new Map<string, Effect[]>();

  /** Grows by one with every write. */
  get revision(): number {
    return this.writeTimes.length;
  }

  /** The earliest time written at since `revision` (Infinity when nothing was written since). */
  earliestSince(revision: number): number {
    let min = Infinity;
    for (let i = revision; i < this.writeTimes.length; i++) {
      min = Math.min(min, this.writeTimes[i] ?? Infinity);
    }
    return min;
  }

  /** The writes of one device in time order. */
  changes(def: DeviceDef): readonly Change[] {
    return this.history.get(def.name) ?? [];
  }

  /** Every write, in the order they arrived. */
  writes(): readonly { t: number; device: string }[] {
    const out: { t: number; device: string }[] = [];
    for (const [device, changes] of this.history) {
      for (const c of changes) out.push({ t: c.t, device });
    }
    return out.sort((a, b) => a.t - b.t);
  }

  /** Names of the devices written. */
  written(): Iterable<string> {
    return this.history.keys();
  }

  /** `past`: the setpoints before any live write, as the facility logged them; else `initial`. */
  constructor(
    private readonly initial: ReadonlyMap<string, number | string>,
    readonly past?: Setpoints,
  ) {}

  /**
   * Adds a fault from its start on: its effects change the devices it
   * touches from then, as an incident's do, and the beam is worked out again
   * from that moment.
   */
  addFault(fault: Happening): void {
    this.faultList.push(fault);
    for (const effect of fault.effects) {
      const list = this.faultEffects.get(effect.device);
      if (list === undefined) this.faultEffects.set(effect.device, [effect]);
      else list.push(effect);
    }
    this.writeTimes.push(fault.start);
  }

  /** The faults added, oldest first. */
  get faults(): readonly Happening[] {
    return this.faultList;
  }

  /** Effects of the faults on `device` active at `t`. */
  effectsAt(device: string, t: number): readonly Effect[] {
    const list = this.faultEffects.get(device);
    if (list === undefined) return NO_EFFECTS;
    const active = list.filter((e) => effectActive(e, t));
    return active.length === 0 ? NO_EFFECTS : active;
  }

  /** A copy with the same writes and faults, sharing nothing that either may change. */
  clone(): SetpointStore {
    const copy = new SetpointStore(this.initial, this.past);
    for (const [name, changes] of this.history) copy.history.set(name, [...changes]);
    copy.writeTimes.push(...this.writeTimes);
    for (const fault of this.faultList) {
      copy.faultList.push(fault);
      for (const effect of fault.effects) {
        const list = copy.faultEffects.get(effect.device);
        if (list === undefined) copy.faultEffects.set(effect.device, [effect]);
        else list.push(effect);
      }
    }
    return copy;
  }

  /** The past's last change of a setpoint at or before `t` (see {@link Setpoints.pastStep}). */
  pastStep(def: DeviceDef, t: number): PastStep | undefined {
    return this.past?.pastStep?.(def, t);
  }

  /** The past's settled ring corrector kicks at `t` (see {@link Setpoints.pastRingKicks}). */
  pastRingKicks(t: number): ReadonlyMap<string, number> | undefined {
    return this.past?.pastRingKicks?.(t);
  }

  /** Setpoints the past may have moved at `t` (see {@link Setpoints.pastMoved}). */
  pastMoved(t: number): ReadonlySet<string> {
    return this.past?.pastMoved?.(t) ?? NOTHING;
  }

  at(def: DeviceDef, t: number): number | string {
    const changes = this.history.get(def.name);
    const initial = this.past?.at(def, t) ?? this.initial.get(def.name) ?? 0;
    if (changes === undefined) return initial;
    // Last change at or before t (binary search: histories can grow long in benchmarks).
    let lo = 0;
    let hi = changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((changes[mid]?.t ?? Infinity) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? initial : changes[lo - 1]?.value ?? initial;
  }

  /** Records a write at time `t`; a later write at the same time wins. */
  set(def: DeviceDef, t: number, value: number | string): void {
    let changes = this.history.get(def.name);
    if (changes === undefined) this.history.set(def.name, changes = []);
    let i = changes.length;
    while (i > 0 && (changes[i - 1]?.t ?? -Infinity) > t) i--;
    changes.splice(i, 0, { t, value });
    this.writeTimes.push(t);
  }
}

/** Setpoints that never change: the machine as generated, for the history shown in the logs. */
export function fixedSetpoints(initial: ReadonlyMap<string, number | string>): Setpoints {
  return { at: (def) => initial.get(def.name) ?? 0 };
}

/**
 * Checks a write against the device's type, writability and native limits and
 * returns the value to store. Throws a `TypeError` or `RangeError` whose
 * one-line message says what was wrong and what would be accepted.
 */
export function checkWrite(facility: Facility, def: DeviceDef, value: Value): number | string {
  const info = def.info;
  if (!info.writable) {
    const hint = writableSibling(facility, def);
    throw new TypeError(`${def.name} is read-only${hint ? `; write ${hint} instead` : ""}`);
  }
  if (info.type === "enum") {
    const labels = info.labels ?? [];
    if (typeof value === "string" && labels.includes(value)) return value;
    if (typeof value === "number" && Number.isInteger(value) && labels[value] !== undefined) {
      return labels[value] ?? "";
    }
    throw new TypeError(`${def.name} expects one of ${labels.join(", ")}, got ${show(value)}`);
  }
  if (info.type === "string") {
    if (typeof value !== "string") {
      throw new TypeError(`${def.name} expects a string, got ${show(value)}`);
    }
    if (value.length > 40) {
      throw new RangeError(`${def.name} holds at most 40 characters, got ${value.length}`);
    }
    return value;
  }
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TypeError(`${def.name} expects a finite number, got ${show(value)}`);
  }
  const { min = -Infinity, max = Infinity } = info.limits ?? {};
  if (value < min || value > max) {
    throw new RangeError(
      `${def.name} value ${value} is outside its limits [${min}, ${max}]${
        info.units ? ` ${info.units}` : ""
      }`,
    );
  }
  return value;
}

function writableSibling(facility: Facility, def: DeviceDef): string | undefined {
  for (const candidate of [def.source, facility.byName.get(`${def.prefix}:SETPT`)]) {
    if (candidate?.info.writable) return candidate.name;
  }
  return undefined;
}

function show(value: Value): string {
  if (typeof value === "string") return `"${value}"`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "number") return String(value);
  return `${typeof value} ${String(value)}`;
}
