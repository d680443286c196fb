/**
 * The stored beam seen from the devices: what the ring's state allows
 * (conditions), the current that follows from it (`beam.ts`), the lifetime
 * that drives that current, beam-loss monitors, RF forward power and bunch
 * length.
 *
 * @module
 */

import { type BeamConditions, type BeamEnv, BeamTrack, closedFormCurrent } from "./beam.ts";
import type { DeviceDef } from "./facility.ts";
import type { LatticePoint } from "./lattice.ts";
import { gauss } from "./noise.ts";
import type { Machine } from "./machine.ts";
import type { Setpoints } from "./setpoints.ts";
import {
  bunchLengthPs,
  C_LIGHT,
  energyLossMeV,
  type Lifetime,
  type LifetimeInputs,
  ringLifetime,
} from "./ring.ts";
import { RingVacuum } from "./vacuum.ts";

/** Orbit excursion (mm) at which losses in the linac and transfer lines double. */
const LOSS_APERTURE_MM = 1;
/** Loss-monitor counts per mA lost at one monitor, and how fast the burst fades. */
const LOSS_COUNTS_PER_MA = 5000;
const LOSS_FADE_MS = 3000;

/** Full conditions: what {@link BeamConditions} says plus the inputs behind it. */
export interface RingConditions extends BeamConditions {
  readonly voltMV: number;
  readonly pressureRatio: number;
  readonly apertureSigma: readonly [number, number];
}

interface Memo {
  revision: number;
  byTime: Map<number, RingConditions>;
}

/** Conditions kept per write history: enough for an archive query's samples and steps. */
const MEMO_SIZE = 4096;

interface Aperture {
  margin: [number, number];
  limiting: DeviceDef | undefined;
  smallestGap: DeviceDef | undefined;
}

/** The stored beam of one {@link Machine}. */
export class StoredBeam {
  private readonly stations: readonly DeviceDef[];
  private readonly vacuum: RingVacuum;
  private readonly ringBpms: readonly { def: DeviceDef; at: LatticePoint; blm?: DeviceDef }[];
  private readonly ringBlms: readonly { def: DeviceDef; at: LatticePoint }[];
  private readonly gaps: readonly { def: DeviceDef; at: LatticePoint }[];
  private readonly tracks = new WeakMap<Setpoints, { revision: number; track: BeamTrack }>();
  private readonly memo = new WeakMap<Setpoints, Memo>();
  private readonly circumference: number;
  private readonly ringName: string;
  private fixedAperture: Aperture | undefined;
  private readonly timing = new Map<string, DeviceDef>();
  private readonly lifetimeDef: DeviceDef | undefined;
  /** Lifetime with the initial settings at the target current, h: the loss monitors' baseline. */
  readonly nominalLifetimeH: number;

  constructor(private readonly physics: Machine) {
    const facility = physics.facility;
    const lattice = physics.optics.lattice;
    this.stations = facility.devices.filter((d) => /^RF:STN:\d+:CAV:VOLT$/.test(d.name));
    this.vacuum = new RingVacuum(physics);
    const ring = [...lattice.sections.values()].find((s) => s.spec.kind === "ring");
    this.circumference = ring?.spec.lengthM ?? 1;
    this.ringName = ring?.name ?? "";
    const placed = (d: DeviceDef) => ({ def: d, at: lattice.of(d) as LatticePoint });
    this.ringBlms = facility.devices.filter((d) =>
      d.role === "blm" && d.section === ring?.name && lattice.of(d)
    ).map(placed);
    this.ringBpms = facility.devices.filter((d) =>
      d.role === "bpm" && d.section === ring?.name && (d.suffix === "X" || d.suffix === "Y")
    ).map((d) => {
      const p = placed(d);
      return { ...p, blm: this.nearestBlm(p.at.s) };
    });
    this.gaps = facility.devices.filter((d) =>
      d.role === "insertion" && d.suffix === "GAP:SETPT" && lattice.of(d)
    ).map(placed);
    for (
      const name of ["TIMING:REP:RATE", "TIMING:MODE", "TIMING:INJ:ENABLE", "TIMING:INJ:INTERVAL"]
    ) {
      const def = facility.byName.get(name);
      if (def !== undefined) this.timing.set(name, def);
    }
    this.lifetimeDef = facility.byName.get("RING:LIFETIME");
    const fixed: Setpoints = { at: (def) => physics.initial.get(def.name) ?? 0 };
    this.nominalLifetimeH = ringLifetime(facility.spec.ring, {
      currentMA: facility.spec.ring.targetMA,
      pressureRatio: 1,
      voltMV: this.totalVoltMV(0, fixed, false),
      apertureSigma: [Infinity, Infinity],
    }).totalH;
  }

  /** The state of the ring at `t`: loss conditions, lifetime, injection. */
  conditions(t: number, sp: Setpoints): RingConditions {
    const revision = sp.revision ?? 0;
    let memo = this.memo.get(sp);
    if (memo === undefined || memo.revision !== revision) {
      memo = { revision, byTime: new Map() };
      this.memo.set(sp, memo);
    }
    const known = memo.byTime.get(t);
    if (known !== undefined) return known;
    const value = this.compute(t, sp);
    if (memo.byTime.size >= MEMO_SIZE) memo.byTime.clear();
    memo.byTime.set(t, value);
    return value;
  }

  /** Stored current, mA, without noise. */
  current(t: number, sp: Setpoints): number {
    const env = this.env(sp);
    const revision = sp.revision ?? 0;
    if (revision === 0 || sp.earliestSince === undefined) return closedFormCurrent(env, t);
    let entry = this.tracks.get(sp);
    if (entry === undefined) {
      entry = { revision, track: new BeamTrack(env, sp.earliestSince(0)) };
      this.tracks.set(sp, entry);
    } else if (entry.revision !== revision) {
      const earliest = sp.earliestSince(entry.revision);
      if (earliest < entry.track.start) {
        entry.track = new BeamTrack(env, earliest);
      } else {
        entry.track.truncate(earliest);
      }
      entry.revision = revision;
    }
    if (t < entry.track.start) return closedFormCurrent(env, t);
    return entry.track.current(t);
  }

  /** True when the ring holds beam at `t` (the DCCT, incidents included, above threshold). */
  present(t: number, sp: Setpoints): boolean {
    const dcct = this.physics.facility.byName.get("RING:DCCT:CURRENT");
    if (dcct === undefined) return true;
    return this.physics.level(dcct, t, sp) > this.physics.facility.spec.ring.beamThresholdMA;
  }

  /** Lifetime and its parts at `t`, for the current stored then (without incident effects). */
  lifetime(t: number, sp: Setpoints): Lifetime {
    const c = this.conditions(t, sp);
    return ringLifetime(this.physics.facility.spec.ring, {
      currentMA: this.current(t, sp),
      pressureRatio: c.pressureRatio,
      voltMV: c.voltMV,
      apertureSigma: c.apertureSigma,
    });
  }

  /** The lifetime as the monitor reads it without noise, h: the formula, then incident effects. */
  private lifetimeReading(t: number, inputs: LifetimeInputs): number {
    const total = ringLifetime(this.physics.facility.spec.ring, inputs).totalH;
    const def = this.lifetimeDef;
    return def === undefined ? total : Number(this.physics.withEffects(def, total, t)) || 0;
  }

  /** Sum of the ring cavity voltages, MV. */
  totalVoltMV(t: number, sp: Setpoints, withEffects = true): number {
    let kV = 0;
    for (const def of this.stations) {
      kV += withEffects
        ? this.physics.level(def, t, sp)
        : Number(this.physics.actual(def.source ?? def, t, sp)) || 0;
    }
    return kV / 1000;
  }

  /**
   * Forward power of one RF station, kW: the cavity wall loss V²/2Rs plus its
   * share of the beam power, I·U₀·Vᵢ/ΣV.
   */
  forwardPowerKW(def: DeviceDef, t: number, sp: Setpoints): number {
    const ring = this.physics.facility.spec.ring;
    const volt = def.source ? this.physics.level(def.source, t, sp) : 0;
    const wall = (volt * volt) / (2 * ring.shuntImpedanceMOhm * 1000);
    const total = this.totalVoltMV(t, sp) * 1000;
    const beamKW = this.current(t, sp) * energyLossMeV(ring); // mA × MV = kW
    return wall + (total > 0 ? (beamKW * volt) / total : 0);
  }

  /** Natural bunch length at the present RF voltage, ps (0 without a bucket or beam). */
  bunchLengthPs(t: number, sp: Setpoints): number {
    const sigma = bunchLengthPs(
      this.physics.facility.spec.ring,
      this.totalVoltMV(t, sp),
      this.circumference,
    );
    return Number.isFinite(sigma) && this.present(t, sp) ? sigma : 0;
  }

  /**
   * A beam-loss monitor, cts/s. In the linac and transfer lines: a baseline
   * that grows with the trajectory excursion nearby. In the ring: the baseline
   * scaled by the loss rate I/τ, plus the burst of a beam loss at this monitor.
   */
  loss(def: DeviceDef, t: number, sp: Setpoints): number {
    const s = def.spec;
    const baseline = (s.nom ?? 10) *
      (1 + (s.spread ?? 0) * gauss(this.physics.seed, def.key, 0x5ca7));
    const bpms = this.physics.optics.blmBpms.get(def.name);
    let excursion = 0;
    if (bpms) {
      excursion = (this.physics.orbit(bpms[0], t, sp) ** 2 +
        this.physics.orbit(bpms[1], t, sp) ** 2) / LOSS_APERTURE_MM ** 2;
    }
    if (def.section !== "RING") return baseline * (1 + excursion);
    const ring = this.physics.facility.spec.ring;
    const current = this.current(t, sp);
    let rate = 0;
    if (current > ring.beamThresholdMA) {
      const tau = this.lifetime(t, sp).totalH;
      rate = (current / ring.targetMA) * (this.nominalLifetimeH / Math.max(tau, 1e-6));
    }
    let burst = 0;
    const track = this.tracks.get(sp)?.track;
    for (const loss of track?.losses ?? []) {
      if (loss.monitor !== def.name || loss.t > t || t - loss.t > 10 * LOSS_FADE_MS) continue;
      burst += LOSS_COUNTS_PER_MA * loss.lostMA * Math.exp(-(t - loss.t) / LOSS_FADE_MS);
    }
    return baseline * (1 + excursion) * rate + burst;
  }

  private env(sp: Setpoints): BeamEnv {
    return {
      targetMA: this.physics.facility.spec.ring.targetMA,
      conditions: (t) => this.conditions(t, sp),
    };
  }

  private compute(t: number, sp: Setpoints): RingConditions {
    // deno-lint-ignore no-this-alias
    const self = this;
    const voltMV = this.totalVoltMV(t, sp);
    const pressureRatio = this.vacuum.pressureRatio(t, sp);
    const setting = (name: string) => {
      const def = this.timing.get(name);
      return def === undefined ? undefined : sp.at(def, t);
    };
    const rep = Number(setting("TIMING:REP:RATE") ?? 1);
    const topUp = (setting("TIMING:MODE") ?? "TOPUP") === "TOPUP" &&
      (setting("TIMING:INJ:ENABLE") ?? "ENABLED") === "ENABLED" && rep > 0;
    // The costlier parts are worked out only when asked for.
    let aperture: Aperture | undefined;
    let loss: { reason: string | undefined; monitor: string | undefined } | undefined;
    let fill: number | undefined;
    const apertureNow = () => aperture ??= this.aperture(t, sp);
    const lossNow = () => loss ??= this.lossCause(t, sp, voltMV, apertureNow());
    return {
      get lossReason() {
        return lossNow().reason;
      },
      get lossMonitor() {
        return lossNow().monitor;
      },
      // What the lifetime monitor reads (incidents included) is what drives the current.
      lifetimeH: (currentMA) =>
        this.lifetimeReading(t, {
          currentMA,
          pressureRatio,
          voltMV,
          apertureSigma: apertureNow().margin,
        }),
      get fillRateMAps() {
        return fill ??= topUp ? self.fillRate(t, sp, rep) : 0;
      },
      topUp,
      intervalS: Number(setting("TIMING:INJ:INTERVAL") ?? 120) || 120,
      voltMV,
      pressureRatio,
      get apertureSigma() {
        return apertureNow().margin;
      },
    };
  }

  /** Each shot brings charge × efficiency; one nC per revolution period (µs) is one mA. */
  private fillRate(t: number, sp: Setpoints, repHz: number): number {
    const physics = this.physics;
    const charge = physics.facility.byName.get("LINAC:GUN:CHARGE");
    const effDef = physics.facility.byName.get("DIAG:INJ:EFF");
    const revolutionUs = (this.circumference / C_LIGHT) * 1e6;
    const q = charge ? physics.level(charge, t, sp) : 0;
    const effRaw = physics.injection.injectionEfficiency(t, sp);
    const eff = effDef ? Number(physics.withEffects(effDef, effRaw, t)) : effRaw;
    return (repHz * q * (eff / 100)) / revolutionUs;
  }

  /** Why no beam can be stored at `t`, and at which loss monitor it goes; undefined when it can. */
  private lossCause(
    t: number,
    sp: Setpoints,
    voltMV: number,
    aperture: Aperture,
  ): { reason: string | undefined; monitor: string | undefined } {
    const physics = this.physics;
    const ring = physics.facility.spec.ring;
    if (voltMV <= energyLossMeV(ring)) {
      // Off-energy particles are lost where the dispersion peaks, mid-arc of the first cell.
      const arcs = physics.facility.spec.optics[this.ringName]?.etaPeriods ?? 1;
      return {
        reason: "RF voltage below the energy loss per turn",
        monitor: this.nearestBlm(this.circumference / (2 * arcs))?.name,
      };
    }
    const { margin, limiting, smallestGap } = aperture;
    if (margin[0] <= 0 || margin[1] <= 0) {
      return { reason: "closed orbit beyond the aperture", monitor: limiting?.name };
    }
    const [integer = 0.01, half = 0.004] = ring.stopband;
    let resonance: number | undefined;
    physics.tunes(t, sp).forEach((nu, p) => {
      const f = ((nu % 1) + 1) % 1;
      if (Math.min(f, 1 - f) < integer || Math.abs(f - 0.5) < half) resonance = p;
    });
    if (resonance !== undefined) {
      const gapAt = smallestGap ? physics.optics.lattice.of(smallestGap)?.s : undefined;
      return {
        reason: `${resonance === 0 ? "horizontal" : "vertical"} tune on a resonance`,
        monitor: this.nearestBlm(resonance === 1 && gapAt !== undefined ? gapAt : 0)?.name,
      };
    }
    const permit = physics.facility.byName.get("MACHINE:BEAM:PERMIT");
    if (permit !== undefined && physics.value(permit, t, sp, false) === "DENIED") {
      return { reason: "beam permit denied", monitor: this.nearestBlm(0)?.name };
    }
    return { reason: undefined, monitor: undefined };
  }

  /**
   * The aperture √(A·β) against the closed orbit, in beam sizes √(ε·β), per
   * plane: the smallest margin over the ring BPMs and insertion-device gaps.
   * Without writes the orbit is the generated one, so it is computed once.
   */
  private aperture(t: number, sp: Setpoints): Aperture {
    const fixed = (sp.revision ?? 0) === 0;
    if (fixed && this.fixedAperture !== undefined) return this.fixedAperture;
    const physics = this.physics;
    const ring = physics.facility.spec.ring;
    const margin: [number, number] = [Infinity, Infinity];
    let limiting: DeviceDef | undefined;
    for (const { def, at, blm } of this.ringBpms) {
      const p = def.plane === "V" ? 1 : 0;
      const beta = at.beta[p] ?? 1;
      const aperture = Math.sqrt((ring.acceptanceMmMrad[p] ?? 1) * beta);
      const size = Math.sqrt((ring.emittanceNm[p] ?? 1) * 1e-6 * beta);
      const m = (aperture - Math.abs(physics.orbit(def, t, sp, false))) / size;
      if (m < (margin[p] ?? Infinity)) {
        margin[p] = m;
        if (m <= 0) limiting = blm;
      }
    }
    let smallestGap: DeviceDef | undefined;
    for (const { def, at } of this.gaps) {
      const gap = Number(physics.actual(def, t, sp)) || 0;
      const size = Math.sqrt((ring.emittanceNm[1] ?? 1) * 1e-6 * (at.beta[1] ?? 1));
      const m = gap / 2 / size;
      if (m < margin[1]) {
        margin[1] = m;
        smallestGap = def;
      }
    }
    const result = { margin, limiting, smallestGap };
    if (fixed) this.fixedAperture = result;
    return result;
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
