/**
 * The setpoint history as the physics reads it: the shapes shared by the
 * store of live writes (`state.ts`), the crews' past (`routine.ts`) and the
 * model (`physics.ts`, `dynamics.ts`), kept below all of them.
 *
 * @module
 */
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
  /** Grows with every write (absent: never written). */
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
}

/** A change of a setpoint in the facility's past: when, from which settled value, to which. */
export interface PastStep {
  readonly t: number;
  readonly from: number;
  readonly to: number;
}
