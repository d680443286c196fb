/**
 * The setpoint history as the physics reads it: the shapes shared by the
 * store of live writes (`state.ts`), the crews' past (`routine.ts`) and the
 * model (`physics.ts`, `dynamics.ts`), kept below all of them.
 *
 * @module
 */
import type { Effect } from "./effects.ts";
import type { DeviceDef } from "./facility.ts";

/** One write: the time (epoch ms) and the value written. */
export interface Change {
  readonly t: number;
  readonly value: number | string;
}

/** Setpoint values in force at a given time (the write history, or just the initial values). */
export interface Setpoints {
  at(def: DeviceDef, t: number): number | string;
  /** The writes of one device in time order (absent: the initial values never change). */
  changes?(def: DeviceDef): readonly Change[];
  /** Grows with every write; absent when never written. */
  readonly revision?: number;
  /** Earliest time written at since `revision` (Infinity when nothing was). */
  earliestSince?(revision: number): number;
  /**
   * The setpoint's last change before the live writes (the crews' routine
   * work) at or before `t`, from a settled value; absent or undefined: the
   * past never moved it from its initial value.
   */
  pastStep?(def: DeviceDef, t: number): PastStep | undefined;
  /** Names of the setpoints the past may have moved from their initial values at `t`. */
  pastMoved?(t: number): ReadonlySet<string>;
  /**
   * The kicks (from the initial settings) the past's last orbit correction
   * left on the ring's correctors at `t`, once they have settled; undefined
   * while they move or when there is none.
   */
  pastRingKicks?(t: number): ReadonlyMap<string, number> | undefined;
  /** Names of the setpoints written live (absent: none). */
  written?(): Iterable<string>;
  /** Effects of faults added live (a task's starting conditions) on `device` at `t`. */
  effectsAt?(device: string, t: number): readonly Effect[];
  /** The setpoints before any live write: the facility's history. */
  readonly past?: Setpoints;
}

/** A change of a setpoint in the facility's past: when, from which settled value, to which. */
export interface PastStep {
  readonly t: number;
  readonly from: number;
  readonly to: number;
}
