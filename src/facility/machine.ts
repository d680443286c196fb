/**
 * What the parts of the physics (the orbit, the injector, the stored beam,
 * the ring's RF and vacuum) read of the whole machine: {@link Physics}
 * implements it, and the parts depend on this interface rather than on the
 * class that holds them.
 *
 * @module
 */
import type { Value } from "../control/records.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import type { IncidentBook } from "./incidents.ts";
import type { LatticePoint } from "./lattice.ts";
import type { Optics } from "./optics.ts";
import type { OrbitModel } from "./orbit.ts";
import type { RingParams } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";

/** A generated arc's quadrupole or sextupole in the ring. */
export interface ArcMagnetOptics {
  readonly at: LatticePoint;
  readonly lengthM: number;
  /** The change of K (quadrupole, 1/m²) or K₂L (sextupole, 1/m²) for a change of its current (A). */
  dk(deltaA: number): number;
}

/** The simulated machine as its parts see it, for one seed. */
export interface Machine {
  readonly facility: Facility;
  readonly seed: number;
  readonly book: IncidentBook;
  readonly optics: Optics;
  /** The ring's parameters (definition and lattice), when there is a ring. */
  readonly ring: RingParams | undefined;
  readonly orbit: OrbitModel;
  /** The setpoints of the day's start. */
  readonly initial: ReadonlyMap<string, number | string>;
  readonly injection: {
    injectionEfficiency(t: number, sp: Setpoints): number;
    fillRateMAps(t: number, sp: Setpoints): number;
  };
  /** The value of `def` at `t`; `noisy` false gives the noise-free trajectory. */
  value(def: DeviceDef, t: number, sp: Setpoints, noisy?: boolean): Value;
  /** A number read without noise (0 for anything else). */
  level(def: DeviceDef, t: number, sp: Setpoints): number;
  /** A number without noise and without the incidents' effects. */
  baseLevel(def: DeviceDef, t: number, sp: Setpoints): number;
  /** The incidents' (and live faults') effects and the device's range applied to a base value. */
  withEffects(def: DeviceDef, value: number | string, t: number, sp?: Setpoints): number | string;
  /** Where a setpoint's device actually is at `t` (it slews). */
  actual(def: DeviceDef, t: number, sp: Setpoints): number | string;
  /** Change of a setpoint's actual value from its initial one. */
  delta(def: DeviceDef, t: number, sp: Setpoints): number;
  /** The ring's live tunes [H, V]. */
  tunes(t: number, sp: Setpoints): readonly [number, number];
  /** The ring's live linear chromaticity [H, V]. */
  chromaticity(t: number, sp: Setpoints): readonly [number, number];
  /**
   * A generated arc's quadrupole (its current setpoint): where it is, how long,
   * and the ΔK (1/m²) a change of its current makes; undefined for anything else.
   */
  arcQuad(def: DeviceDef): ArcMagnetOptics | undefined;
  /** Relative energy offset of the stored beam set by the RF frequency: δ = −(Δf/f)/α_c. */
  rfDelta(t: number, sp: Setpoints): number;
  /** Relative energy error δ of the beam a section sees ("linac", "booster", "ring"). */
  energyError(source: string | undefined, t: number, sp: Setpoints): number;
}
