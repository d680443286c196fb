/**
 * What every device reads at a given time: a pure function of the seed, the
 * time, the setpoints in force at that time, and the incidents of the day.
 * Live reads, the archive and the alarm log all call {@link Physics.value},
 * so they never disagree.
 *
 * @module
 */

import type { Value } from "../control/records.ts";
import { arcEnergy, arcOrbit } from "./arc_physics.ts";
import { applyEffect } from "./effects.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import { HOUR_MS, IncidentBook } from "./incidents.ts";
import { lagged, slewed, slewedStep } from "./dynamics.ts";
import { gauss, smooth } from "./noise.ts";
import { buildOptics, type Optics, termResponse } from "./optics.ts";
import { rigidityTm, undulatorFieldT } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import type { Machine } from "./machine.ts";
import { StoredBeam } from "./storage.ts";
import { Injection } from "./injection.ts";
import { alarmOf, initialSetpoints, num, plus, probeWave, turnByTurnWave } from "./signals.ts";

export type { Change, PastStep, Setpoints } from "./setpoints.ts";
export { type Alarm, alarmOf } from "./signals.ts";
import type { Alarm } from "./signals.ts";

const DAY_MS = 24 * HOUR_MS;
const DEG = Math.PI / 180;

/** The simulated machine's physics for one seed. */
export class Physics implements Machine {
  readonly optics: Optics;
  readonly initial: ReadonlyMap<string, number | string>;
  /** The stored beam: current, lifetime, losses. */
  readonly beam: StoredBeam;
  /** The linac's energy, each section's energy error, the injection efficiency. */
  readonly injection: Injection;
  private readonly tunnel: readonly DeviceDef[];
  private readonly gaps: readonly { gap: DeviceDef; betaY: number }[];
  private readonly ringBpmCount: number;
  /** Fixed calibration offset of each readback. */
  private readonly calibration = new Map<DeviceDef, number>();
  private readonly tuneMemo = new WeakMap<
    Setpoints,
    { t: number; revision: number; nu: readonly [number, number] }
  >();

  constructor(
    readonly facility: Facility,
    readonly seed: number,
    readonly book: IncidentBook,
  ) {
    this.optics = buildOptics(facility, seed);
    this.initial = initialSetpoints(facility, seed);
    this.tunnel = facility.devices.filter((d) => d.prefix.startsWith("RING:TUNNEL:TEMP:"));
    this.ringBpmCount =
      facility.devices.filter((d) => d.role === "bpm" && d.section === "RING" && d.suffix === "X")
        .length;
    this.gaps = facility.devices.filter((d) => d.role === "insertion" && d.suffix === "GAP:SETPT")
      .map((gap) => ({ gap, betaY: this.optics.lattice.of(gap)?.beta[1] ?? 0 }));
    this.injection = new Injection(this);
    this.beam = new StoredBeam(this);
  }

  /** The value of `def` at time `t` (epoch ms); `noisy` false gives the noise-free trajectory. */
  value(def: DeviceDef, t: number, sp: Setpoints, noisy = true): Value {
    const v = this.base(def, t, sp, noisy);
    if (Array.isArray(v) || typeof v === "boolean") return v;
    return this.withEffects(def, v, t);
  }

  /** A number read without noise (0 for anything else). */
  level(def: DeviceDef, t: number, sp: Setpoints): number {
    return num(this.value(def, t, sp, false));
  }

  /** A number without noise and without the incidents' effects (0 for anything else). */
  baseLevel(def: DeviceDef, t: number, sp: Setpoints): number {
    return num(this.base(def, t, sp, false));
  }

  /** Applies the incidents' effects and the device's range to a base value. */
  withEffects(def: DeviceDef, value: number | string, t: number): number | string {
    let v = value;
    for (const effect of this.book.effectsAt(def.name, t)) v = applyEffect(effect, v, t);
    if (typeof v === "number" && !def.info.writable) {
      const { min = -Infinity, max = Infinity } = def.info.limits ?? {};
      v = Math.min(max, Math.max(min, v));
    }
    return v;
  }

  /** Alarm of a value: INVALID when the device needs a beam (or injection) the machine lacks. */
  alarm(def: DeviceDef, t: number, sp: Setpoints, value: Value | null): Alarm {
    if (def.spec.needsBeam && !this.beam.present(t, sp)) {
      return { severity: "INVALID", status: "NO_BEAM" };
    }
    if (def.spec.needsInjection && !this.beam.conditions(t, sp).topUp) {
      return { severity: "INVALID", status: "NO_INJECTION" };
    }
    return alarmOf(def, value);
  }

  /**
   * Where a setpoint's device actually is at `t`: magnets, RF and drives slew
   * at the rate in the device's `slew`, first through the crews' routine
   * changes (`pastStep`), then towards each live write from where those left it.
   */
  actual(def: DeviceDef, t: number, sp: Setpoints): number | string {
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

  /** The ring's live tunes (integer + fraction) [H, V], without noise. */
  tunes(t: number, sp: Setpoints): readonly [number, number] {
    if ((sp.revision ?? 0) === 0) return this.optics.ringTunes;
    const memo = this.tuneMemo.get(sp);
    const revision = sp.revision ?? 0;
    if (memo !== undefined && memo.t === t && memo.revision === revision) return memo.nu;
    const nu = this.computeTunes(t, sp);
    this.tuneMemo.set(sp, { t, revision, nu });
    return nu;
  }

  private computeTunes(t: number, sp: Setpoints): [number, number] {
    const nu: [number, number] = [this.optics.ringTunes[0], this.optics.ringTunes[1]];
    for (const q of this.optics.tune) {
      const i0 = num(this.initial.get(q.magnet.name)) || 1;
      const dk = (q.k1 * this.delta(q.magnet, t, sp)) / i0;
      nu[0] += q.weight[0] * dk;
      nu[1] -= q.weight[1] * dk;
    }
    const ring = this.facility.spec.ring;
    for (const { gap, betaY } of this.gaps) {
      const focus = (g: number) =>
        (betaY * ring.idLengthM * (undulatorFieldT(g, ring.idPeriodMm) /
              rigidityTm(ring.energyMeV)) ** 2) / (8 * Math.PI);
      nu[1] += focus(num(this.actual(gap, t, sp))) - focus(num(this.initial.get(gap.name)));
    }
    return nu;
  }

  /** Orbit response (mm/mrad) of a BPM position to a corrector at `t` (live tune in the ring). */
  response(bpm: DeviceDef, corrector: DeviceDef, t: number, sp: Setpoints): number {
    const term = this.optics.terms.get(bpm.name)?.find((x) => x.corrector === corrector);
    if (term === undefined) return 0;
    const ring = this.optics.lattice.of(bpm)?.section === "RING";
    return termResponse(term, ring, ring ? (this.tunes(t, sp)[term.plane] ?? 0) : 0);
  }

  /**
   * Closed orbit (ring) or trajectory (lines) at a BPM, mm, without noise;
   * `slow` false leaves out the µm-scale thermal drift and dispersion.
   */
  orbit(def: DeviceDef, t: number, sp: Setpoints, slow = true): number {
    let x = this.optics.offset.get(def.name) ?? 0;
    const at = this.optics.lattice.of(def);
    const section = at ? this.facility.spec.optics[at.section] : undefined;
    const ring = section?.kind === "ring";
    const nu = ring ? this.tunes(t, sp)[def.plane === "V" ? 1 : 0] ?? 0 : 0;
    // Without writes only the correctors the routine work moved can have changed their kicks.
    const written = (sp.revision ?? 0) > 0;
    const moved = written ? undefined : sp.pastMoved?.(t);
    for (const term of written || moved?.size ? this.optics.terms.get(def.name) ?? [] : []) {
      if (moved !== undefined && !moved.has(term.corrector.name)) continue;
      const kick = this.delta(term.corrector, t, sp);
      if (kick !== 0) x += termResponse(term, ring, nu) * kick;
    }
    if (ring) {
      const ringSpec = this.facility.spec.ring;
      for (const term of written ? this.optics.idTerms.get(def.name) ?? [] : []) {
        const g0 = num(this.initial.get(term.corrector.name));
        const g = num(this.actual(term.corrector, t, sp));
        if (g === g0) continue;
        const b2 = (gap: number) => undulatorFieldT(gap, ringSpec.idPeriodMm) ** 2;
        const kick = ringSpec.idKickMradPerT2 * (b2(g) - b2(g0)) *
          gauss(this.seed, term.corrector.key, term.plane);
        x += termResponse(term, true, nu) * kick;
      }
      if (slow) x += this.thermalOrbit(def, t, sp);
    }
    if (slow && at !== undefined && at.eta !== 0 && def.plane === "H") {
      x += 1000 * at.eta * this.injection.energyError(section?.energySource, t, sp);
    }
    return x;
  }

  /** Girders move with the tunnel temperature: a few µm per kelvin at each ring BPM. */
  private thermalOrbit(def: DeviceDef, t: number, sp: Setpoints): number {
    if (this.tunnel.length === 0 || this.ringBpmCount === 0) return 0;
    const i = Math.min(
      this.tunnel.length - 1,
      Math.floor(((def.index - 0.5) * this.tunnel.length) / this.ringBpmCount),
    );
    const sensor = this.tunnel[i] as DeviceDef;
    const s = sensor.spec;
    const base = (s.nom ?? 0) * (1 + (s.spread ?? 0) * gauss(this.seed, sensor.key, 0x5ca7));
    const dT = this.level(sensor, t, sp) - base;
    return this.facility.spec.ring.thermalOrbitMmPerK * gauss(this.seed, def.key, 0x7e41) * dT;
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
      case "follow": {
        const gain = (s.gain ?? 1) * (1 + (s.spread ?? 0) * scatter);
        const level = (v: number | string) =>
          gain * (Math.abs(num(v)) / (s.ref ?? 1)) ** (s.pow ?? 1);
        const src = def.source;
        const followed = src?.model === "set" && s.lag !== undefined && sp.changes !== undefined
          ? lagged(level(this.initial.get(src.name) ?? 0), sp.changes(src), level, s.lag, t)
          : level(source());
        return (s.nom ?? 0) + followed + this.drift(def, t) + noise;
      }
      case "bpm":
        return this.orbit(def, t, sp) + noise;
      case "arc-orbit": // generated arcs (scale.ts)
        return arcOrbit(
          def,
          this.seed,
          this.facility.spec.orbitOffsetMm,
          (c) => this.delta(c, t, sp),
        ) +
          noise;
      case "arc-energy":
        return arcEnergy(
          def,
          this.seed,
          (c) => num(this.actual(c, t, sp)),
          (c) => num(this.initial.get(c.name)),
        ) +
          noise;
      case "tbt":
        return turnByTurnWave(
          def,
          this.seed,
          t,
          this.tunes(t, sp)[def.plane === "V" ? 1 : 0] ?? 0.25,
          source(),
          noisy,
        );
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
      case "rfpower":
        return this.beam.forwardPowerKW(def, t, sp) + this.drift(def, t) + noise;
      case "bunchlength":
        return this.beam.bunchLengthPs(t, sp) + this.drift(def, t) + noise;
      case "booster": {
        const e = this.facility.spec.injector.boosterEnergyMeV;
        return e * (1 + this.injection.energyError("booster", t, sp)) + noise;
      }
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
