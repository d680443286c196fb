/**
 * The stored beam seen from the devices: what the ring's state allows
 * (conditions: losses, interlocks, injection), the current that follows from
 * it (`beam.ts`), the lifetime that drives that current, beam-loss monitors,
 * RF forward power and bunch length.
 *
 * The current of the facility's history is the closed-form top-up cycle
 * except around the incidents that touch the beam (RF trips, injection
 * faults, vacuum bursts): there it is integrated from just before the
 * incident, through the loss, the interlocks and the refill. Live writes and
 * faults start a track of their own from the history's current.
 *
 * @module
 */

import {
  type BeamConditions,
  type BeamEnv,
  BeamTrack,
  closedFormCurrent,
  type LossEvent,
} from "./beam.ts";
import type { DeviceDef } from "./facility.ts";
import { IncidentBook, SHIFT_MS } from "./incidents.ts";
import { LossMonitors } from "./loss_monitors.ts";
import type { Machine } from "./machine.ts";
import type { RingRf } from "./rf.ts";
import type { Setpoints } from "./setpoints.ts";
import {
  bunchLengthPs,
  energyLossMeV,
  type Lifetime,
  type LifetimeInputs,
  ringLifetime,
} from "./ring.ts";
import { RingVacuum } from "./vacuum.ts";
import { type Aperture, type InjectionInterlock, RingLimits } from "./ring_limits.ts";

export type { InjectionInterlock } from "./ring_limits.ts";

/** How long before and after a beam incident its current is integrated rather than closed-form. */
const EPISODE_BEFORE_MS = 60_000;
const EPISODE_AFTER_MS = 45 * 60_000;
const EPISODES_KEPT = 256;

/** Full conditions: what {@link BeamConditions} says plus the inputs behind it. */
export interface RingConditions extends BeamConditions {
  /** Vector sum of the cavity voltages, MV. */
  readonly voltMV: number;
  readonly pressureRatio: number;
  readonly apertureSigma: readonly [number, number];
  readonly acceptanceRatio: number;
  readonly physicalAcceptance: number;
  readonly interlock: InjectionInterlock;
}

interface Memo {
  revision: number;
  byTime: Map<number, RingConditions>;
}

/** Conditions kept per write history: enough for an archive query's samples and steps. */
const MEMO_SIZE = 8192;

/** A span of the history integrated step by step. */
interface Episode {
  readonly from: number;
  readonly to: number;
  track?: BeamTrack;
}

/** The stored beam of one {@link Machine}. */
export class StoredBeam {
  private readonly vacuum: RingVacuum;
  private readonly limits: RingLimits;
  private readonly monitors: LossMonitors;
  private readonly tracks = new WeakMap<Setpoints, { revision: number; track: BeamTrack }>();
  private readonly memo = new WeakMap<Setpoints, Memo>();
  private readonly episodes = new Map<number, readonly Episode[]>();
  private readonly dcct: DeviceDef | undefined;
  /** Lifetime with the initial settings at the target current, h: the loss monitors' baseline. */
  readonly nominalLifetimeH: number;

  constructor(private readonly physics: Machine, private readonly rf: RingRf) {
    const facility = physics.facility;
    this.vacuum = new RingVacuum(physics);
    this.limits = new RingLimits(physics, rf, (t, sp) => this.energyLossMeV(t, sp));
    this.dcct = facility.byName.get("RING:DCCT:CURRENT");
    const params = physics.ring;
    this.nominalLifetimeH = params === undefined ? 10 : ringLifetime(params, {
      currentMA: params.targetMA,
      pressureRatio: 1,
      voltMV: params.nominalVoltMV,
      apertureSigma: [Infinity, Infinity],
      acceptanceRatio: 1,
      physicalAcceptance: Infinity,
    }).totalH;
    this.monitors = new LossMonitors(physics, this.vacuum, this, this.limits.ringBlms);
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
    const revision = sp.revision ?? 0;
    const past = sp.past ?? sp;
    if (revision === 0 || sp.earliestSince === undefined) return this.history(t, past);
    let entry = this.tracks.get(sp);
    if (entry === undefined) {
      const start = sp.earliestSince(0);
      entry = { revision, track: new BeamTrack(this.env(sp), start, this.history(start, past)) };
      this.tracks.set(sp, entry);
    } else if (entry.revision !== revision) {
      const earliest = sp.earliestSince(entry.revision);
      if (earliest < entry.track.start) {
        entry.track = new BeamTrack(this.env(sp), earliest, this.history(earliest, past));
      } else {
        entry.track.truncate(earliest);
      }
      entry.revision = revision;
    }
    if (t < entry.track.start) return this.history(t, past);
    return entry.track.current(t);
  }

  /** The losses of beam between `from` and `to` (the history's and the live ones). */
  losses(from: number, to: number, sp: Setpoints): LossEvent[] {
    const out: LossEvent[] = [];
    const past = sp.past ?? sp;
    const live = (sp.revision ?? 0) > 0 ? this.tracks.get(sp)?.track : undefined;
    const liveStart = live?.start ?? Infinity;
    for (let k = IncidentBook.shiftOf(from) - 1; k <= IncidentBook.shiftOf(to); k++) {
      for (const e of this.episodesOf(k, past)) {
        if (e.to < from || e.from > to || e.from >= liveStart) continue;
        this.history(Math.min(to, e.to - 1, liveStart - 1), past); // integrates up to there
        for (const l of e.track?.losses ?? []) {
          if (l.t >= from && l.t <= to && l.t < liveStart) out.push(l);
        }
      }
    }
    if (live !== undefined) {
      this.current(to, sp);
      for (const l of live.losses) if (l.t >= from && l.t <= to) out.push(l);
    }
    return out;
  }

  /** True when the ring holds beam at `t`. */
  present(t: number, sp: Setpoints): boolean {
    return this.current(t, sp) > (this.physics.ring?.beamThresholdMA ?? 0.01);
  }

  /** Lifetime and its parts at `t`, for the current stored then. */
  lifetime(t: number, sp: Setpoints): Lifetime {
    const c = this.conditions(t, sp);
    return this.lifetimeOf(c, this.current(t, sp));
  }

  private lifetimeOf(c: RingConditions, currentMA: number): Lifetime {
    const params = this.physics.ring;
    if (params === undefined) {
      return {
        totalH: Infinity,
        gasH: Infinity,
        touschekH: Infinity,
        quantumH: Infinity,
        acceptance: 0,
        bunchPs: 0,
      };
    }
    const inputs: LifetimeInputs = {
      currentMA,
      pressureRatio: c.pressureRatio,
      voltMV: c.voltMV,
      apertureSigma: c.apertureSigma,
      acceptanceRatio: c.acceptanceRatio,
      physicalAcceptance: c.physicalAcceptance,
    };
    return ringLifetime(params, inputs);
  }

  /** The energy the beam loses per turn now, MeV (∝ E⁴). */
  energyLossMeV(t: number, sp: Setpoints): number {
    const params = this.physics.ring;
    if (params === undefined) return 0;
    return energyLossMeV(
      params,
      params.energyMeV * (1 + this.physics.energyError("ringEnergy", t, sp)),
    );
  }

  /**
   * Forward power of one RF station, kW: the cavity wall loss V²/2Rs plus the
   * power it gives the beam (its share of I·U₀ at its phase).
   */
  forwardPowerKW(def: DeviceDef, t: number, sp: Setpoints): number {
    const params = this.physics.ring;
    if (params === undefined) return 0;
    const volt = def.source ? this.physics.level(def.source, t, sp) : 0;
    const wall = (volt * volt) / (2 * params.shuntImpedanceMOhm * 1000);
    const v = this.rf.voltage(t, sp);
    const beam = this.rf.beamPowerKW(def, v, this.current(t, sp), this.energyLossMeV(t, sp));
    return wall + Math.max(0, beam);
  }

  /** Natural bunch length at the present RF voltage, ps (0 without a bucket or beam). */
  bunchLengthPs(t: number, sp: Setpoints): number {
    const params = this.physics.ring;
    if (params === undefined) return 0;
    const sigma = bunchLengthPs(params, this.rf.voltage(t, sp).mv);
    return Number.isFinite(sigma) && this.present(t, sp) ? sigma : 0;
  }

  /** A beam-loss monitor, cts/s (see {@link LossMonitors}). */
  loss(def: DeviceDef, t: number, sp: Setpoints): number {
    return this.monitors.loss(def, t, sp);
  }

  /** The average ring pressure at `t` over the reference's. */
  pressureRatio(t: number, sp: Setpoints): number {
    return this.conditions(t, sp).pressureRatio;
  }

  /** Why injection is not allowed at `t` ("OK" when it is). */
  interlock(t: number, sp: Setpoints): InjectionInterlock {
    return this.conditions(t, sp).interlock;
  }

  private env(sp: Setpoints): BeamEnv {
    return {
      targetMA: this.physics.ring?.targetMA ?? 300,
      conditions: (t) => this.conditions(t, sp),
    };
  }

  /** The history's current: closed form, or integrated around the incidents that touch the beam. */
  private history(t: number, sp: Setpoints): number {
    const k = IncidentBook.shiftOf(t);
    for (const kk of [k, k - 1]) {
      for (const e of this.episodesOf(kk, sp)) {
        if (t < e.from || t >= e.to) continue;
        e.track ??= new BeamTrack(this.env(sp), e.from);
        return e.track.current(t);
      }
    }
    return closedFormCurrent(this.env(sp), t, this.keepsUp(sp));
  }

  private keeps: boolean | undefined;

  /**
   * Whether the injector, at the initial settings, makes up the beam's loss
   * at the target current (rate·τ ≥ target): then the undisturbed history is
   * the top-up cycle, else the equilibrium the injector can hold.
   */
  private keepsUp(sp: Setpoints): boolean {
    if (this.keeps !== undefined) return this.keeps;
    const target = this.physics.ring?.targetMA ?? 300;
    const t = 0;
    const c = this.conditions(t, sp);
    this.keeps = c.fillRateMAps * c.lifetimeH(target) * 3600 >= target;
    return this.keeps;
  }

  /** The spans of shift `k`'s beam incidents (merged where they overlap), from the shift's start. */
  private episodesOf(k: number, sp: Setpoints): readonly Episode[] {
    let list = this.episodes.get(k);
    if (list !== undefined) return list;
    const spans = this.physics.book.plan(k).incidents
      .filter((i) => i.kind === "rf-trip" || i.kind === "injection" || i.kind === "vacuum-burst")
      .map((i) => ({ from: i.start - EPISODE_BEFORE_MS, to: i.end + EPISODE_AFTER_MS }))
      .sort((a, b) => a.from - b.from);
    const merged: Episode[] = [];
    for (const s of spans) {
      const last = merged[merged.length - 1];
      if (last !== undefined && s.from <= last.to) {
        merged[merged.length - 1] = { from: last.from, to: Math.max(last.to, s.to) };
      } else merged.push(s);
    }
    // An episode of the shift before that runs into this one continues it: no second start.
    const before = k === Number.MIN_SAFE_INTEGER ? [] : this.episodesBefore(k);
    list = merged.filter((e) => !before.some((b) => e.from >= b.from && e.from < b.to));
    void sp;
    if (this.episodes.size >= EPISODES_KEPT) {
      const oldest = this.episodes.keys().next().value;
      if (oldest !== undefined) this.episodes.delete(oldest);
    }
    this.episodes.set(k, list);
    return list;
  }

  private episodesBefore(k: number): readonly { from: number; to: number }[] {
    const plan = this.physics.book.plan(k - 1);
    return plan.incidents
      .filter((i) => i.kind === "rf-trip" || i.kind === "injection" || i.kind === "vacuum-burst")
      .map((i) => ({ from: i.start - EPISODE_BEFORE_MS, to: i.end + EPISODE_AFTER_MS }))
      .filter((e) => e.to > k * SHIFT_MS);
  }

  private compute(t: number, sp: Setpoints): RingConditions {
    // deno-lint-ignore no-this-alias
    const self = this;
    const voltMV = this.rf.voltage(t, sp).mv;
    const pressureRatio = this.vacuum.pressureRatio(t, sp);
    const interlock = this.limits.injectionInterlock(t, sp);
    // The costlier parts are worked out only when asked for.
    let aperture: Aperture | undefined;
    let loss: { reason: string | undefined; monitor: string | undefined } | undefined;
    let fill: number | undefined;
    const apertureNow = () => aperture ??= this.limits.aperture(t, sp);
    const lossNow = () => loss ??= this.limits.lossCause(t, sp, voltMV, apertureNow());
    const conditions: RingConditions = {
      get lossReason() {
        return lossNow().reason;
      },
      get lossMonitor() {
        return lossNow().monitor;
      },
      lifetimeH: (currentMA) => self.lifetimeOf(conditions, currentMA).totalH,
      get fillRateMAps() {
        return fill ??= interlock === "OK" ? self.physics.injection.fillRateMAps(t, sp) : 0;
      },
      topUp: interlock === "OK",
      intervalS: Number(this.limits.setting("TIMING:INJ:INTERVAL", t, sp) ?? 120) || 120,
      voltMV,
      pressureRatio,
      get apertureSigma() {
        return apertureNow().margin;
      },
      get acceptanceRatio() {
        return apertureNow().acceptanceRatio;
      },
      get physicalAcceptance() {
        return apertureNow().physicalAcceptance;
      },
      interlock,
    };
    return conditions;
  }

  /** The ring gauges' average pressure with the initial settings, mbar: what pressure ratios are of. */
  get pressureReference(): number {
    return this.vacuum.reference;
  }

  /** The DCCT device, when the facility has one. */
  get dcctDevice(): DeviceDef | undefined {
    return this.dcct;
  }
}
