/**
 * What the parts of the physics (the injector, the stored beam, the ring's
 * vacuum) read of the whole machine: {@link Physics} implements it, and the
 * parts depend on this interface rather than on the class that holds them.
 *
 * @module
 */
import type { Value } from "../control/records.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import type { IncidentBook } from "./incidents.ts";
import type { Optics } from "./optics.ts";
import type { Setpoints } from "./setpoints.ts";

/** The simulated machine as its parts see it, for one seed. */
export interface Machine {
  readonly facility: Facility;
  readonly seed: number;
  readonly book: IncidentBook;
  readonly optics: Optics;
  /** The setpoints of the day's start. */
  readonly initial: ReadonlyMap<string, number | string>;
  readonly injection: { injectionEfficiency(t: number, sp: Setpoints): number };
  /** The value of `def` at `t`; `noisy` false gives the noise-free trajectory. */
  value(def: DeviceDef, t: number, sp: Setpoints, noisy?: boolean): Value;
  /** A number read without noise (0 for anything else). */
  level(def: DeviceDef, t: number, sp: Setpoints): number;
  /** A number without noise and without the incidents' effects. */
  baseLevel(def: DeviceDef, t: number, sp: Setpoints): number;
  /** The incidents' effects and the device's range applied to a base value. */
  withEffects(def: DeviceDef, value: number | string, t: number): number | string;
  /** Where a setpoint's device actually is at `t` (it slews). */
  actual(def: DeviceDef, t: number, sp: Setpoints): number | string;
  /** Change of a setpoint's actual value from its initial one. */
  delta(def: DeviceDef, t: number, sp: Setpoints): number;
  /** Closed orbit or trajectory at a BPM, mm, without noise. */
  orbit(def: DeviceDef, t: number, sp: Setpoints, slow?: boolean): number;
  /** The ring's live tunes [H, V]. */
  tunes(t: number, sp: Setpoints): readonly [number, number];
}
