/**
 * What the storage ring allows at a time: whether injection may go on (the
 * top-up interlocks), whether a beam can be stored at all (a tripped station's
 * RF interlock, the RF voltage against U₀, the linear stability of the
 * cell with the quadrupoles and the energy as they are, the energy against
 * the momentum acceptance, the closed orbit against the aperture, the tunes
 * against the stopbands and the resonance lines between them and the design,
 * the chromaticity against the head-tail instability, the beam permit), and the aperture the orbit leaves
 * (margins in beam sizes, transverse and momentum acceptance).
 *
 * @module
 */

import { elements, periodic } from "./cell_matrices.ts";
import type { DeviceDef } from "./facility.ts";
import type { LatticePoint } from "./lattice.ts";
import type { Machine } from "./machine.ts";
import type { RingRf } from "./rf.ts";
import type { Setpoints } from "./setpoints.ts";

/** Injector event receivers: a lost link there stops the injection triggers. */
const INJECTOR_EVRS = 8;
/** The history's aperture is worked out on this grid (its orbit wanders by µm in hours). */
const APERTURE_GRID_MS = 15 * 60_000;
const MEMO_SIZE = 8192;

/** Why injection is not allowed, as `TIMING:INJ:INTLK` reads it ("OK": allowed). */
export type InjectionInterlock = "OK" | "DISABLED" | "RF_NOT_READY" | "BEAM_PERMIT" | "TIMING_LINK";

/** The aperture the closed orbit leaves, and where it is smallest. */
export interface Aperture {
  margin: [number, number];
  acceptanceRatio: number;
  physicalAcceptance: number;
  limiting: DeviceDef | undefined;
  smallestGap: DeviceDef | undefined;
}

/** The ring's limits of one {@link Machine}. */
export class RingLimits {
  /** The ring's beam-loss monitors and where they are. */
  readonly ringBlms: readonly { def: DeviceDef; at: LatticePoint }[];
  private readonly ringBpms: readonly { def: DeviceDef; at: LatticePoint; blm?: DeviceDef }[];
  private readonly gaps: readonly { def: DeviceDef; at: LatticePoint }[];
  private readonly apertures = new Map<number, Aperture>();
  private readonly circumference: number;
  private readonly timing = new Map<string, DeviceDef>();
  private readonly evrs: readonly DeviceDef[];
  private readonly permit: DeviceDef | undefined;

  constructor(
    private readonly physics: Machine,
    private readonly rf: RingRf,
    private readonly energyLossMeV: (t: number, sp: Setpoints) => number,
  ) {
    const facility = physics.facility;
    const lattice = physics.optics.lattice;
    const ring = lattice.ring;
    this.circumference = ring?.lengthM ?? 1;
    const placed = (d: DeviceDef) => ({ def: d, at: lattice.of(d) as LatticePoint });
    this.ringBlms = facility.catalogue.filter((d) =>
      d.role === "blm" && d.section === ring?.name && lattice.of(d)
    ).map(placed);
    this.ringBpms = facility.catalogue.filter((d) =>
      d.role === "bpm" && d.section === ring?.name && (d.suffix === "X" || d.suffix === "Y")
    ).map((d) => {
      const p = placed(d);
      return { ...p, blm: this.nearestBlm(p.at.s) };
    });
    this.gaps = facility.catalogue.filter((d) =>
      d.role === "insertion" && d.suffix === "GAP:SETPT" && lattice.of(d)
    ).map(placed);
    for (
      const name of ["TIMING:REP:RATE", "TIMING:MODE", "TIMING:INJ:ENABLE", "TIMING:INJ:INTERVAL"]
    ) {
      const def = facility.byName.get(name);
      if (def !== undefined) this.timing.set(name, def);
    }
    this.evrs = facility.catalogue.filter((d) =>
      /^TIMING:EVR:\d+:STATUS$/.test(d.name) && d.index <= INJECTOR_EVRS
    );
    this.permit = facility.byName.get("MACHINE:BEAM:PERMIT");
  }

  /** A timing setting (mode, enable, repetition rate, top-up interval) at `t`. */
  setting(name: string, t: number, sp: Setpoints): number | string | undefined {
    const def = this.timing.get(name);
    return def === undefined ? undefined : sp.at(def, t);
  }

  /** The first interlock that stops injection at `t`, "OK" when none does. */
  injectionInterlock(t: number, sp: Setpoints): InjectionInterlock {
    const setting = (name: string) => this.setting(name, t, sp);
    const rep = Number(setting("TIMING:REP:RATE") ?? 1);
    if (
      (setting("TIMING:MODE") ?? "TOPUP") !== "TOPUP" ||
      (setting("TIMING:INJ:ENABLE") ?? "ENABLED") !== "ENABLED" || !(rep > 0)
    ) return "DISABLED";
    if (!this.rf.ready(t, sp)) return "RF_NOT_READY";
    if (this.permit && this.physics.value(this.permit, t, sp, false) === "DENIED") {
      return "BEAM_PERMIT";
    }
    for (const evr of this.evrs) {
      if (this.physics.value(evr, t, sp, false) !== "OK") return "TIMING_LINK";
    }
    return "OK";
  }

  /** Why no beam can be stored at `t`, and at which loss monitor it goes; undefined when it can. */
  lossCause(
    t: number,
    sp: Setpoints,
    voltMV: number,
    aperture: Aperture,
  ): { reason: string | undefined; monitor: string | undefined } {
    const physics = this.physics;
    const ring = physics.ring;
    if (ring === undefined) return { reason: undefined, monitor: undefined };
    // Off-energy particles are lost where the dispersion peaks.
    const dispersive = () => this.highestDispersionBlm()?.name;
    const tripped = this.rf.stationIn("TRIPPED", t, sp);
    if (tripped !== undefined) {
      return {
        reason: `RF station ${tripped} tripped: the RF interlock dumps the beam`,
        monitor: dispersive(),
      };
    }
    if (voltMV <= this.energyLossMeV(t, sp)) {
      return { reason: "RF voltage below the energy loss per turn", monitor: dispersive() };
    }
    const unstable = this.unstablePlane(t, sp);
    if (unstable !== undefined) {
      return {
        reason: `${
          unstable === 0 ? "horizontal" : "vertical"
        } optics unstable: no closed orbit with the quadrupoles and the energy as they are`,
        monitor: this.nearestBlm(0)?.name,
      };
    }
    const delta = physics.energyError("ringEnergy", t, sp);
    if (Math.abs(delta) > ring.momentumAcceptance) {
      return {
        reason: `beam energy ${(100 * delta).toFixed(1)} % off, beyond the momentum acceptance`,
        monitor: dispersive(),
      };
    }
    const { margin, limiting, smallestGap } = aperture;
    if (margin[0] <= 0 || margin[1] <= 0) {
      return { reason: "closed orbit beyond the aperture", monitor: limiting?.name };
    }
    const [integer = 0.01, half = 0.004] = ring.stopband;
    let resonance: number | undefined;
    const design = physics.optics.ringTunes;
    physics.tunes(t, sp).forEach((nu, p) => {
      const f = ((nu % 1) + 1) % 1;
      if (Math.min(f, 1 - f) < integer || Math.abs(f - 0.5) < half) resonance = p;
      // A stored beam cannot cross an integer or half-integer line on its way to these tunes.
      if (Math.floor(2 * nu) !== Math.floor(2 * (design[p] ?? nu))) resonance = p;
    });
    if (resonance !== undefined) {
      const gapAt = smallestGap ? physics.optics.lattice.of(smallestGap)?.s : undefined;
      return {
        reason: `${resonance === 0 ? "horizontal" : "vertical"} tune on a resonance`,
        monitor: this.nearestBlm(resonance === 1 && gapAt !== undefined ? gapAt : 0)?.name,
      };
    }
    const xi = physics.chromaticity(t, sp);
    if (Math.min(xi[0], xi[1]) < ring.headTailChromaticity) {
      return {
        reason: `head-tail instability: ${xi[0] < xi[1] ? "horizontal" : "vertical"} chromaticity ${
          Math.min(xi[0], xi[1]).toFixed(1)
        }`,
        monitor: this.nearestBlm(0)?.name,
      };
    }
    if (this.permit !== undefined && physics.value(this.permit, t, sp, false) === "DENIED") {
      return { reason: "beam permit denied", monitor: this.nearestBlm(0)?.name };
    }
    return { reason: undefined, monitor: undefined };
  }

  /**
   * The plane (0 horizontal, 1 vertical) in which the ring's cell has no
   * periodic solution, |½·Tr M| ≥ 1, with the quadrupole families' live
   * strengths seen by a beam of the live energy (K/(1 + δ)); undefined when
   * both planes are stable. The linear tune shifts hold only near the design:
   * a family switched off or a dipole far from its field is decided here.
   */
  unstablePlane(t: number, sp: Setpoints): number | undefined {
    const physics = this.physics;
    const section = physics.optics.ring;
    const cell = section?.spec.cell;
    const optics = section?.ring;
    if (cell === undefined || optics === undefined) return undefined;
    const energy = 1 + physics.energyError("ringEnergy", t, sp);
    if (!(energy > 0)) return 0;
    const k = new Map<string, number>();
    for (const q of optics.quads) k.set(q.family, q.strength / energy);
    let changed = energy !== 1;
    for (const f of physics.optics.quads) {
      const family = f.magnet.name.replace(/:CURRENT$/, "");
      const i0 = Number(physics.initial.get(f.magnet.name)) || 1;
      const d = physics.delta(f.magnet, t, sp);
      if (d !== 0) changed = true;
      k.set(family, (f.strength * (1 + d / i0)) / energy);
    }
    // The design cell is stable (it was matched): only a change can make it otherwise.
    if (!changed) return undefined;
    const els = elements(cell, k, optics.bendRadiusM);
    for (const plane of [0, 1]) if (periodic(els, plane) === undefined) return plane;
    return undefined;
  }

  /**
   * The aperture √(A·β) against the closed orbit, per plane, over the ring
   * BPMs and insertion-device gaps: the smallest margin in beam sizes
   * √(ε·β), the transverse acceptance the orbit leaves (vertical, relative),
   * and the momentum acceptance the horizontal aperture leaves where there
   * is dispersion, (a − |x|)/η. The history's is worked out on a quarter-hour grid.
   */
  aperture(t: number, sp: Setpoints): Aperture {
    const fixed = (sp.revision ?? 0) === 0;
    const key = Math.floor(t / APERTURE_GRID_MS);
    if (fixed) {
      const known = this.apertures.get(key);
      if (known !== undefined) return known;
    }
    const at = fixed ? key * APERTURE_GRID_MS : t;
    const physics = this.physics;
    const ring = physics.ring;
    const margin: [number, number] = [Infinity, Infinity];
    let acceptanceRatio = 1;
    let physicalAcceptance = Infinity;
    let limiting: DeviceDef | undefined;
    let smallestGap: DeviceDef | undefined;
    if (ring !== undefined) {
      for (const { def, at: p, blm } of this.ringBpms) {
        const plane = def.plane === "V" ? 1 : 0;
        const beta = p.beta[plane] ?? 1;
        const a = Math.sqrt((ring.acceptanceMmMrad[plane] ?? 1) * beta);
        const size = Math.sqrt((ring.emittanceNm[plane] ?? 1) * 1e-3 * beta);
        const x = Math.abs(physics.orbit.position(p, plane, at, sp));
        const m = (a - x) / size;
        if (m < (margin[plane] ?? Infinity)) {
          margin[plane] = m;
          if (m <= 0) limiting = blm;
        }
        if (plane === 1) acceptanceRatio = Math.min(acceptanceRatio, Math.max(0, (a - x) / a) ** 2);
        if (plane === 0 && p.eta > 0.05) {
          physicalAcceptance = Math.min(physicalAcceptance, Math.max(0, a - x) / (1000 * p.eta));
        }
      }
      for (const { def, at: p } of this.gaps) {
        const gap = Number(physics.actual(def, at, sp)) || 0;
        const beta = p.beta[1] ?? 1;
        const size = Math.sqrt((ring.emittanceNm[1] ?? 1) * 1e-3 * beta);
        const a = Math.sqrt((ring.acceptanceMmMrad[1] ?? 1) * beta);
        const half = Math.min(gap / 2, a);
        const m = half / size;
        if (m < margin[1]) {
          margin[1] = m;
          smallestGap = def;
        }
        acceptanceRatio = Math.min(acceptanceRatio, (half / a) ** 2);
      }
    }
    const result = { margin, acceptanceRatio, physicalAcceptance, limiting, smallestGap };
    if (fixed) {
      if (this.apertures.size >= MEMO_SIZE) this.apertures.clear();
      this.apertures.set(key, result);
    }
    return result;
  }

  private highestDispersionBlm(): DeviceDef | undefined {
    let best: DeviceDef | undefined;
    let eta = -Infinity;
    for (const { def, at } of this.ringBlms) {
      if (at.eta > eta + 1e-9) {
        eta = at.eta;
        best = def;
      }
    }
    return best;
  }

  private nearestBlm(s: number): DeviceDef | undefined {
    let best: DeviceDef | undefined;
    let distance = Infinity;
    for (const { def, at } of this.ringBlms) {
      const d = Math.min(Math.abs(at.s - s), this.circumference - Math.abs(at.s - s));
      if (d < distance) {
        distance = d;
        best = def;
      }
    }
    return best;
  }
}
