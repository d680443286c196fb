/**
 * Beam-loss monitors. In the linac and transfer lines a monitor reads a
 * baseline that grows with the trajectory excursion nearby; in the ring it
 * reads the loss rate I/τ, its gas-scattering part scaled by the pressure of
 * the monitor's own cell, plus the burst of a beam loss at the monitor.
 *
 * @module
 */

import type { LossEvent } from "./beam.ts";
import type { DeviceDef } from "./facility.ts";
import type { Machine } from "./machine.ts";
import { gauss } from "./noise.ts";
import type { Lifetime } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import type { RingVacuum } from "./vacuum.ts";

/** Orbit excursion (mm) at which losses in the linac and transfer lines double. */
const LOSS_APERTURE_MM = 1;
/** Loss-monitor counts per mA lost at one monitor, and how fast the burst fades. */
const LOSS_COUNTS_PER_MA = 5000;
const LOSS_FADE_MS = 3000;
/** Generated arcs' monitors whose cell's gauges are kept. */
const GAUGES_KEPT = 100_000;

/** What the monitors read of the stored beam. */
export interface BeamReadings {
  current(t: number, sp: Setpoints): number;
  lifetime(t: number, sp: Setpoints): Lifetime;
  pressureRatio(t: number, sp: Setpoints): number;
  losses(from: number, to: number, sp: Setpoints): LossEvent[];
  readonly nominalLifetimeH: number;
}

/** The loss monitors of one machine. */
export class LossMonitors {
  private readonly gaugesOf = new Map<DeviceDef, DeviceDef[]>();
  private memo = new WeakMap<Setpoints, { t: number; byCell: Map<DeviceDef[], number> }>();
  private readonly ringName: string;

  constructor(
    private readonly physics: Machine,
    private readonly vacuum: RingVacuum,
    private readonly beam: BeamReadings,
    ringBlms: readonly { def: DeviceDef }[],
  ) {
    this.ringName = physics.optics.lattice.ring?.name ?? "";
    const gaugesOfCell = new Map<number, DeviceDef[]>();
    for (const g of vacuum.gauges) {
      const cell = Math.ceil(g.index / 3);
      gaugesOfCell.set(cell, [...(gaugesOfCell.get(cell) ?? []), g]);
    }
    for (const b of ringBlms) {
      this.gaugesOf.set(b.def, gaugesOfCell.get(Math.ceil(b.def.index / 6)) ?? []);
    }
  }

  /** A beam-loss monitor's reading at `t`, cts/s. */
  loss(def: DeviceDef, t: number, sp: Setpoints): number {
    const s = def.spec;
    const physics = this.physics;
    const baseline = (s.nom ?? 10) * (1 + (s.spread ?? 0) * gauss(physics.seed, def.key, 0x5ca7));
    const bpms = physics.optics.blmBpms.get(def.name);
    let excursion = 0;
    if (bpms) {
      excursion = (physics.orbit.bpm(bpms[0], t, sp, false) ** 2 +
        physics.orbit.bpm(bpms[1], t, sp, false) ** 2) / LOSS_APERTURE_MM ** 2;
    }
    const inRing = def.section === this.ringName ||
      physics.optics.lattice.of(def)?.section === this.ringName;
    if (!inRing) return baseline * (1 + excursion);
    const params = physics.ring;
    const current = this.beam.current(t, sp);
    let rate = 0;
    if (params !== undefined && current > params.beamThresholdMA) {
      const life = this.beam.lifetime(t, sp);
      const gauges = this.gaugesNear(def);
      const local = gauges.length > 0
        ? this.cellPressure(gauges, t, sp) /
          (this.vacuum.reference * Math.max(this.beam.pressureRatio(t, sp), 1e-9))
        : 1;
      // Gas scattering where the gas is; Touschek and quantum losses spread around the ring.
      const perHour = local / life.gasH + 1 / life.touschekH + 1 / life.quantumH;
      rate = (current / params.targetMA) * this.beam.nominalLifetimeH * perHour;
    }
    let burst = 0;
    for (const l of this.beam.losses(t - 10 * LOSS_FADE_MS, t, sp)) {
      if (l.monitor !== def.name || l.t > t) continue;
      burst += LOSS_COUNTS_PER_MA * l.lostMA * Math.exp(-(t - l.t) / LOSS_FADE_MS);
    }
    return baseline * (1 + excursion) * rate + burst;
  }

  /** The ion gauges of a ring loss monitor's cell (a generated arc's: of its cell in the arc). */
  private gaugesNear(def: DeviceDef): DeviceDef[] {
    let gauges = this.gaugesOf.get(def);
    if (gauges === undefined) {
      const arc = /^(ARC\d+):BLM:(\d+)$/.exec(def.prefix);
      gauges = [];
      if (arc !== null) {
        const cell = Math.ceil(Number(arc[2]) / 12);
        for (let i = (cell - 1) * 6 + 1; i <= cell * 6; i++) {
          const g = this.physics.facility.byName.get(
            `${arc[1]}:VAC:IG:${String(i).padStart(2, "0")}:PRES`,
          );
          if (g !== undefined) gauges.push(g);
        }
      }
      if (this.gaugesOf.size < GAUGES_KEPT) this.gaugesOf.set(def, gauges);
    }
    return gauges;
  }

  /** Mean pressure of a cell's gauges at `t` (kept for the other monitors of the cell). */
  private cellPressure(gauges: DeviceDef[], t: number, sp: Setpoints): number {
    let memo = this.memo.get(sp);
    if (memo === undefined || memo.t !== t) {
      memo = { t, byCell: new Map() };
      this.memo.set(sp, memo);
    }
    let p = memo.byCell.get(gauges);
    if (p === undefined) {
      p = gauges.reduce((sum, g) => sum + this.physics.level(g, t, sp), 0) / gauges.length;
      memo.byCell.set(gauges, p);
    }
    return p;
  }
}
