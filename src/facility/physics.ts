/**
 * What every device reads at a given time: a pure function of the seed, the
 * time, the setpoints in force at that time, the incidents of the facility's
 * history and the faults added live. Live reads, the archive and the alarm
 * log all call {@link Physics.value}, so they never disagree.
 *
 * Incidents and faults change the machine's inputs (a cavity's voltage, a
 * gauge's pressure, a pulser's output, a link, a flow); everything that
 * follows from them (the stored current, lifetime, losses, temperatures with
 * their thermal lags, powers, efficiencies) is computed here from the inputs.
 *
 * @module
 */

import type { Value } from "../control/records.ts";
import { applyEffect, type Effect } from "./effects.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import { HOUR_MS, IncidentBook } from "./incidents.ts";
import { lagged, laggedSignal, slewed, slewedStep } from "./dynamics.ts";
import { gauss, smooth } from "./noise.ts";
import { buildOptics, lineResponse, type Optics } from "./optics.ts";
import { OrbitModel } from "./orbit.ts";
import { type RingParams, ringParams } from "./ring.ts";
import { RingRf } from "./rf.ts";
import type { Setpoints } from "./setpoints.ts";
import type { ArcMagnetOptics, Machine } from "./machine.ts";
import { StoredBeam } from "./storage.ts";
import { Injection } from "./injection.ts";
import { Instruments } from "./instruments.ts";
import { RingTunes } from "./tunes.ts";
import { alarmOf, initialSetpoints, num, plus, probeWave } from "./signals.ts";

export type { Change, PastStep, Setpoints } from "./setpoints.ts";
export { type Alarm, alarmOf } from "./signals.ts";
import type { Alarm } from "./signals.ts";

const DAY_MS = 24 * HOUR_MS;
const DEG = Math.PI / 180;

/** The simulated machine's physics for one seed. */
export class Physics implements Machine {
  readonly optics: Optics;
  readonly initial: ReadonlyMap<string, number | string>;
  readonly ring: RingParams | undefined;
  readonly orbit: OrbitModel;
  readonly rf: RingRf;
  /** The stored beam: current, lifetime, losses. */
  readonly beam: StoredBeam;
  /** The linac's energy, each section's energy error, the injection efficiency. */
  readonly injection: Injection;
  private readonly ringTunes: RingTunes;
  private readonly instruments: Instruments;
  /** Fixed calibration offset of each readback. */
  private readonly calibration = new Map<DeviceDef, number>();

  constructor(
    readonly facility: Facility,
    readonly seed: number,
    readonly book: IncidentBook,
  ) {
    this.optics = buildOptics(facility, seed);
    this.initial = initialSetpoints(facility, seed);
    const cell = this.optics.ring?.ring;
    let volt = 0;
    for (const def of facility.catalogue) {
      if (/^RF:STN:\d+:VOLT:SETPT$/.test(def.name)) volt += num(this.initial.get(def.name));
    }
    this.ring = cell === undefined ? undefined : ringParams(facility.spec.ring, cell, volt / 1000);
    this.ringTunes = new RingTunes(this);
    this.orbit = new OrbitModel(this);
    this.rf = new RingRf(this);
    this.injection = new Injection(this);
    this.beam = new StoredBeam(this, this.rf);
    this.instruments = new Instruments(this);
  }

  /** The value of `def` at time `t` (epoch ms); `noisy` false gives the noise-free trajectory. */
  value(def: DeviceDef, t: number, sp: Setpoints, noisy = true): Value {
    const v = this.base(def, t, sp, noisy);
    if (Array.isArray(v) || typeof v === "boolean") return v;
    return this.withEffects(def, v, t, sp);
  }

  /** A number read without noise (0 for anything else). */
  level(def: DeviceDef, t: number, sp: Setpoints): number {
    return num(this.value(def, t, sp, false));
  }

  /** A number without noise and without the incidents' effects (0 for anything else). */
  baseLevel(def: DeviceDef, t: number, sp: Setpoints): number {
    return num(this.base(def, t, sp, false));
  }

  /** Applies the incidents' and live faults' effects and the device's range to a base value. */
  withEffects(def: DeviceDef, value: number | string, t: number, sp?: Setpoints): number | string {
    let v = value;
    for (const effect of this.book.effectsAt(def.name, t)) v = applyEffect(effect, v, t);
    for (const effect of sp?.effectsAt?.(def.name, t) ?? NO_EFFECTS) v = applyEffect(effect, v, t);
    if (typeof v === "number" && !def.info.writable) {
      const { min = -Infinity, max = Infinity } = def.info.limits ?? {};
      v = Math.min(max, Math.max(min, v));
    }
    return v;
  }

  /** Alarm of a value: INVALID when the device needs a beam, injection or a screen the machine lacks. */
  alarm(def: DeviceDef, t: number, sp: Setpoints, value: Value | null): Alarm {
    if (def.spec.needsBeam && !this.beam.present(t, sp)) {
      return { severity: "INVALID", status: "NO_BEAM" };
    }
    if (def.spec.needsInjection && !this.beam.conditions(t, sp).topUp) {
      return { severity: "INVALID", status: "NO_INJECTION" };
    }
    if (def.model === "screen" && this.instruments.screenOut(def, t, sp)) {
      return { severity: "INVALID", status: "SCREEN_OUT" };
    }
    return alarmOf(def, value);
  }

  /**
   * Where a setpoint's device actually is at `t`: magnets, RF and drives slew
   * at the rate in the device's `slew`, first through the crews' routine
   * changes (`pastStep`), then towards each live write from where those left it.
   */
  actual(def: DeviceDef, t: number, sp: Setpoints): number | string {
    const hold = this.holdAt(def, t, sp);
    if (hold === undefined) return this.following(def, t, sp);
    return hold.value ?? this.following(def, hold.from, sp);
  }

  /** The fault that stops `def` following its setpoint at `t` (the earliest), if any. */
  private holdAt(
    def: DeviceDef,
    t: number,
    sp: Setpoints,
  ): Extract<Effect, { kind: "hold" }> | undefined {
    let found: Extract<Effect, { kind: "hold" }> | undefined;
    const check = (effects: readonly Effect[]) => {
      for (const e of effects) {
        if (e.kind === "hold" && (found === undefined || e.from < found.from)) found = e;
      }
    };
    check(this.book.effectsAt(def.name, t));
    check(sp.effectsAt?.(def.name, t) ?? NO_EFFECTS);
    return found;
  }

  /** Where a setpoint's device is at `t` when it follows its setpoint. */
  private following(def: DeviceDef, t: number, sp: Setpoints): number | string {
    const target = sp.at(def, t);
    const rate = def.spec.slew;
    if (rate === undefined || typeof target !== "number") return target;
    if (sp.changes === undefined && sp.pastStep === undefined) return target;
    const writes = sp.changes?.(def) ?? [];
    const first = writes[0];
    if (first === undefined || t < first.t) return this.pastActual(def, t, sp, rate);
    return slewed(this.pastActual(def, first.t, sp, rate), writes, rate, t);
  }

  /** Where the routine changes alone leave a slewing device at `t`. */
  private pastActual(def: DeviceDef, t: number, sp: Setpoints, rate: number): number {
    const step = sp.pastStep?.(def, t);
    if (step === undefined) return num(this.initial.get(def.name));
    return slewedStep(step.from, step.to, rate, t - step.t);
  }

  /** Change of a setpoint's actual value from its initial one. */
  delta(def: DeviceDef, t: number, sp: Setpoints): number {
    return num(this.actual(def, t, sp)) - num(this.initial.get(def.name));
  }

  /** A generated arc's quadrupole setpoint in the ring. */
  arcQuad(def: DeviceDef): ArcMagnetOptics | undefined {
    return this.ringTunes.arcQuad(def);
  }

  /** δ = −(Δf/f)/α_c: a higher RF frequency pulls the beam onto a shorter, lower-energy orbit. */
  rfDelta(t: number, sp: Setpoints): number {
    return this.ringTunes.rfDelta(t, sp);
  }

  /** Relative energy error δ of the beam a section sees. */
  energyError(source: string | undefined, t: number, sp: Setpoints): number {
    if (source === "ringEnergy") {
      return this.ringTunes.dipoleDelta(t, sp) + this.ringTunes.rfDelta(t, sp);
    }
    return this.injection.energyError(source, t, sp);
  }

  /** The ring's live tunes (integer + fraction) [H, V], without noise. */
  tunes(t: number, sp: Setpoints): readonly [number, number] {
    return this.ringTunes.tunes(t, sp);
  }

  /** Linear chromaticity [H, V]: the lattice's with the sextupoles as set. */
  chromaticity(t: number, sp: Setpoints): readonly [number, number] {
    return this.ringTunes.chromaticity(t, sp);
  }

  /** Orbit response (mm/mrad) of a BPM position to a corrector at `t` (live tune in the ring). */
  response(bpm: DeviceDef, corrector: DeviceDef, t: number, sp: Setpoints): number {
    const i = this.optics.lattice.of(bpm);
    const c = this.orbit.corrector(corrector.name);
    if (i === undefined || c === undefined) return 0;
    const plane = bpm.plane === "V" ? 1 : 0;
    if (plane !== c.plane) return 0;
    if (i.section === this.optics.ring?.name) {
      return c.at.section === i.section ? this.orbit.ringResponse(i, c.at, plane, t, sp) : 0;
    }
    return lineResponse(this.optics.lattice, i, c.at, plane);
  }

  /** Closed orbit (ring) or trajectory (lines) a BPM reads, mm, without noise. */
  bpmOrbit(def: DeviceDef, t: number, sp: Setpoints, slow = true): number {
    return this.orbit.bpm(def, t, sp, slow);
  }

  private base(def: DeviceDef, t: number, sp: Setpoints, noisy: boolean): Value {
    const s = def.spec;
    const noise = noisy ? (s.sigma ?? 0) * gauss(this.seed, def.key, t) : 0;
    const scatter = gauss(this.seed, def.key, 0x5ca7);
    const source = () => (def.source ? num(this.value(def.source, t, sp, noisy)) : 0);
    switch (def.model) {
      case "set":
        return sp.at(def, t);
      case "rdbk":
        return this.readback(def, t, sp, noisy) ?? 0;
      case "analog":
        if (s.log) {
          const decades = (s.spread ?? 0) * scatter + (s.drift ?? 0) * this.wander(def, t);
          return (s.nom ?? 1) *
            10 ** (decades + (noisy ? (s.sigma ?? 0) * gauss(this.seed, def.key, t) : 0));
        }
        return (s.nom ?? 0) * (1 + (s.spread ?? 0) * scatter) + this.drift(def, t) + noise;
      case "follow":
        return this.follow(def, t, sp, noisy, noise, scatter);
      case "bpm":
        return this.orbit.bpm(def, t, sp) + noise;
      case "tbt":
        return this.instruments.turnByTurn(def, t, sp, noisy);
      case "probe":
        return probeWave(def, this.seed, t, source(), noisy);
      case "blm":
        return this.beam.loss(def, t, sp) + noise;
      case "energy":
        return this.injection.beamEnergy(t, sp) + this.drift(def, t) +
          (noisy ? this.facility.spec.linac.energyNoiseMeV * gauss(this.seed, def.key, t) : 0);
      case "espread":
        return (s.nom ?? 0) +
          (s.gain ?? 0) * Math.abs(Math.sin(this.injection.offCrest(t, sp) * DEG)) +
          noise;
      case "injeff": {
        const stores = this.beam.conditions(t, sp).lossReason === undefined;
        return stores ? this.injection.injectionEfficiency(t, sp) + noise : 0;
      }
      case "dcct":
        return this.beam.current(t, sp) + noise;
      case "lifetime": {
        if (!this.beam.present(t, sp)) return 0;
        return this.beam.lifetime(t, sp).totalH + noise;
      }
      case "tune": {
        const nu = this.tunes(t, sp)[def.suffix.endsWith("Y") ? 1 : 0] ?? 0;
        return (((nu + noise) % 1) + 1) % 1;
      }
      case "chrom":
        return (this.chromaticity(t, sp)[def.suffix.endsWith("Y") ? 1 : 0] ?? 0) + noise;
      case "rfpower":
        return this.beam.forwardPowerKW(def, t, sp) + this.drift(def, t) + noise;
      case "bunchlength":
        return this.beam.bunchLengthPs(t, sp) + this.drift(def, t) + noise;
      case "booster":
        return this.injection.boosterEnergy(t, sp) + noise;
      case "boostercharge":
        return this.injection.chargeNC(t, sp) * (s.gain ?? 1) *
            this.injection.boosterCapture(t, sp) +
          noise;
      case "ramp":
        return this.instruments.ramp(def, t, sp, noisy);
      case "arc-energy": {
        // The ring's energy, less what the beam has radiated since the RF (at the ring's start).
        const at = this.optics.lattice.of(def);
        const C = this.ring?.circumferenceM ?? 1;
        const u0 = this.beam.energyLossMeV(t, sp);
        const e = this.facility.spec.ring.energyMeV * (1 + this.energyError("ringEnergy", t, sp));
        return e + u0 * (0.5 - (at?.s ?? 0) / C) + noise;
      }
      case "ringenergy":
        return this.facility.spec.ring.energyMeV * (1 + this.energyError("ringEnergy", t, sp)) +
          noise;
      case "emittance": {
        // The lattice's equilibrium emittance, with a relative wander and noise (`drift`, `sigma`).
        const plane = def.suffix.endsWith("Y") ? 1 : 0;
        return (this.ring?.emittanceNm[plane] ?? s.nom ?? 0) *
          (1 + (s.drift ?? 0) * this.wander(def, t) +
            (noisy ? (s.sigma ?? 0) * gauss(this.seed, def.key, t) : 0));
      }
      case "xbpm":
        return this.instruments.photonBpm(def, t, sp) + this.drift(def, t) + noise;
      case "shutter":
        return this.instruments.shutter(t, sp);
      case "coolret":
        return this.instruments.coolingReturn(def, t, sp) + this.drift(def, t) + noise;
      case "screen":
        return this.instruments.screenSize(def, t, sp) * (1 + (s.spread ?? 0) * scatter) + noise;
      case "intlk":
        return this.beam.interlock(t, sp);
      case "moving": {
        const gap = def.source;
        if (gap !== undefined && this.actual(gap, t, sp) !== sp.at(gap, t)) return "MOVING";
        return typeof s.init === "string" ? s.init : String(s.init ?? "");
      }
      case "mode":
        return this.book.plan(IncidentBook.shiftOf(t)).mode;
      case "crew": {
        const crew = this.book.plan(IncidentBook.shiftOf(t)).crew;
        return `Crew ${crew.id}: ${crew.lead} (lead), ${crew.operator}`;
      }
      default: // "enum" and constant strings
        return typeof s.init === "string" ? s.init : String(s.init ?? "");
    }
  }

  /**
   * A signal that follows another: nom + gain·(|source|/ref)^pow. With `lag`,
   * the source's level reaches it through a first-order lag (a temperature's
   * thermal mass): exact for a setpoint's steps, an exponential kernel over
   * the source's past otherwise.
   */
  private follow(
    def: DeviceDef,
    t: number,
    sp: Setpoints,
    noisy: boolean,
    noise: number,
    scatter: number,
  ) {
    const s = def.spec;
    const gain = (s.gain ?? 1) * (1 + (s.spread ?? 0) * scatter);
    const level = (v: number | string) => gain * (Math.abs(num(v)) / (s.ref ?? 1)) ** (s.pow ?? 1);
    const src = def.source;
    let followed: number;
    if (src === undefined) followed = 0;
    else if (s.lag === undefined) followed = level(num(this.value(src, t, sp, noisy)));
    else if (src.model === "set" && sp.changes !== undefined) {
      followed = lagged(level(this.initial.get(src.name) ?? 0), sp.changes(src), level, s.lag, t);
    } else if (src.model === "set") followed = level(sp.at(src, t));
    else followed = laggedSignal(s.lag, t, (u) => level(this.level(src, u, sp)));
    return (s.nom ?? 0) + followed + this.drift(def, t) + noise;
  }

  /**
   * A readback: where the device actually is (it slews towards its setpoint),
   * plus a small fixed calibration offset and noise.
   */
  private readback(def: DeviceDef, t: number, sp: Setpoints, noisy: boolean): Value | undefined {
    const src = def.source;
    if (src === undefined) return undefined;
    const sigma = def.spec.sigma ?? 0;
    const noise = noisy ? sigma * gauss(this.seed, def.key, t) : 0;
    let offset = this.calibration.get(def);
    if (offset === undefined) {
      offset = sigma * Math.max(-1, Math.min(1, 0.5 * gauss(this.seed, def.key, 0xca1b)));
      this.calibration.set(def, offset);
    }
    if (src.model === "set") {
      const v = this.actual(src, t, sp);
      return typeof v === "number" ? v + offset + noise : v;
    }
    return plus(this.value(src, t, sp, noisy), offset + noise);
  }

  /** Slow wander plus a day-night cycle that peaks mid-afternoon. */
  drift(def: DeviceDef, t: number): number {
    const s = def.spec;
    let d = 0;
    if (s.drift) d += s.drift * this.wander(def, t);
    if (s.diurnal) d += s.diurnal * Math.sin(2 * Math.PI * (t / DAY_MS - 0.375));
    return d;
  }

  private wander(def: DeviceDef, t: number): number {
    return smooth(this.seed, def.key, t, 4 * HOUR_MS);
  }
}

const NO_EFFECTS: readonly Effect[] = [];
