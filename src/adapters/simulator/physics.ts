/**
 * What every device reads at a given time: a pure function of the seed, the
 * time, the setpoints in force at that time, and the incidents of the day.
 * Live reads, the archive and the alarm log all call {@link Physics.value},
 * so they never disagree.
 *
 * @module
 */

import type { Severity, Value } from "../adapter.ts";
import { arcEnergy, arcOrbit } from "./arc_physics.ts";
import { applyEffect } from "./effects.ts";
import type { DeviceDef, Facility } from "./facility.ts";
import { HOUR_MS, IncidentBook } from "./incidents.ts";
import { lagged, slewed, slewedStep } from "./dynamics.ts";
import { gauss, hashNumbers, smooth, uniform } from "./noise.ts";
import { buildOptics, type Optics, termResponse } from "./optics.ts";
import { rigidityTm, undulatorFieldT } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import { StoredBeam } from "./storage.ts";

export type { Change, PastStep, Setpoints } from "./setpoints.ts";

/** An alarm state. */
export interface Alarm {
  severity: Severity;
  status: string;
}

const DAY_MS = 24 * HOUR_MS;
const DEG = Math.PI / 180;
const TBT_AMPLITUDE_MM = 0.3;
/** Relative kicker-voltage and septum-current errors that cost 63 % of the injected beam. */
const KICKER_TOLERANCE = 0.03;
const SEPTUM_TOLERANCE = 0.01;

/** The simulated machine's physics for one seed. */
export class Physics {
  readonly optics: Optics;
  /** RF phase (deg) of maximum energy gain; the initial setpoint sits a few degrees off it. */
  readonly onCrestDeg: number;
  readonly initial: ReadonlyMap<string, number | string>;
  /** The stored beam: current, lifetime, losses. */
  readonly beam: StoredBeam;
  private readonly phase: DeviceDef;
  private readonly amplitude: DeviceDef;
  private readonly energy: DeviceDef;
  private readonly dcct: DeviceDef;
  private readonly boosterDipole: DeviceDef | undefined;
  private readonly moFreq: DeviceDef | undefined;
  private readonly injectionBpms: readonly DeviceDef[];
  private readonly tunnel: readonly DeviceDef[];
  private readonly gaps: readonly { gap: DeviceDef; betaY: number }[];
  private readonly ringBpmCount: number;
  private readonly screens: readonly DeviceDef[];
  private readonly pulsed: readonly { def: DeviceDef; tolerance: number }[];
  /** Fixed calibration offset of each readback. */
  private readonly calibration = new Map<DeviceDef, number>();
  private readonly tuneMemo = new WeakMap<
    Setpoints,
    { t: number; revision: number; nu: readonly [number, number] }
  >();
  /** Linac energy with the initial settings, MeV: the reference of the dispersion downstream. */
  private readonly linacEnergy0: number;

  constructor(
    readonly facility: Facility,
    readonly seed: number,
    readonly book: IncidentBook,
  ) {
    this.optics = buildOptics(facility, seed);
    this.initial = initialSetpoints(facility, seed);
    const need = (name: string) => {
      const def = facility.byName.get(name);
      if (def === undefined) throw new Error(`The facility definition lacks ${name}`);
      return def;
    };
    this.phase = need("RF:PHASE:SETPT");
    this.amplitude = need("RF:AMPL:SETPT");
    this.energy = need("DIAG:ENERGY:MEAS");
    this.dcct = need("RING:DCCT:CURRENT");
    this.boosterDipole = facility.byName.get("BOOSTER:DIPOLE:CURRENT");
    this.moFreq = facility.byName.get("RF:MO:FREQ");
    this.injectionBpms = facility.spec.injector.injectionBpms.map(need);
    this.tunnel = facility.devices.filter((d) => d.prefix.startsWith("RING:TUNNEL:TEMP:"));
    this.ringBpmCount =
      facility.devices.filter((d) => d.role === "bpm" && d.section === "RING" && d.suffix === "X")
        .length;
    this.gaps = facility.devices.filter((d) => d.role === "insertion" && d.suffix === "GAP:SETPT")
      .map((gap) => ({ gap, betaY: this.optics.lattice.of(gap)?.beta[1] ?? 0 }));
    const [lo = 3, hi = 5] = facility.spec.linac.detuneDeg;
    const detune = lo + (hi - lo) * uniform(seed, 0xc2e57);
    this.onCrestDeg = round(num(this.initial.get(this.phase.name)) - detune, 2);
    this.linacEnergy0 = facility.spec.linac.energyMeV * Math.cos(detune * DEG);
    this.screens = facility.devices.filter((d) => /^DIAG:SCREEN:\d+:POS$/.test(d.name));
    this.pulsed = facility.devices.flatMap((d) =>
      /^BTS:KICKER:\d+:VOLT:SETPT$/.test(d.name)
        ? [{ def: d, tolerance: KICKER_TOLERANCE }]
        : d.name === "BTS:SEPTUM:CURRENT"
        ? [{ def: d, tolerance: SEPTUM_TOLERANCE }]
        : []
    );
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
  private delta(def: DeviceDef, t: number, sp: Setpoints): number {
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
      x += 1000 * at.eta * this.energyError(section?.energySource, t, sp);
    }
    return x;
  }

  /** Relative energy error δ of the beam a section sees. */
  energyError(source: string | undefined, t: number, sp: Setpoints): number {
    if (source === "linac") return this.beamEnergy(t, sp) / this.linacEnergy0 - 1;
    if (source === "booster" && this.boosterDipole !== undefined) {
      return this.delta(this.boosterDipole, t, sp) /
        (num(this.initial.get(this.boosterDipole.name)) || 1);
    }
    if (source === "ring" && this.moFreq !== undefined) {
      // δ = −(Δf/f)/α: a higher RF frequency pulls the beam onto a shorter, lower-energy orbit.
      const f0 = this.moFreq.spec.nom ?? 1;
      const df = this.level(this.moFreq, t, sp) / f0 - 1;
      return -df / this.facility.spec.ring.momentumCompaction;
    }
    return 0;
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
        return this.turnByTurn(def, t, sp, source(), noisy);
      case "probe":
        return this.probe(def, t, source(), noisy);
      case "blm":
        return this.beam.loss(def, t, sp) + noise;
      case "energy":
        return this.beamEnergy(t, sp) + this.drift(def, t) +
          (noisy ? this.facility.spec.linac.energyNoiseMeV * gauss(this.seed, def.key, t) : 0);
      case "espread":
        return (s.nom ?? 0) + (s.gain ?? 0) * Math.abs(Math.sin(this.offCrest(t, sp) * DEG)) +
          noise;
      case "injeff": {
        const stores = this.beam.conditions(t, sp).lossReason === undefined;
        return stores ? this.injectionEfficiency(t, sp) + noise : 0;
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
        return e * (1 + this.energyError("booster", t, sp)) + noise;
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

  /** Phase distance from crest (deg), from where the RF actually is. */
  private offCrest(t: number, sp: Setpoints): number {
    return num(this.actual(this.phase, t, sp)) - this.onCrestDeg;
  }

  /** E = E0 · A/A0 · cos(φ − φ_crest), without noise or drift. */
  beamEnergy(t: number, sp: Setpoints): number {
    const linac = this.facility.spec.linac;
    const a = num(this.actual(this.amplitude, t, sp)) / linac.amplitudePct;
    return linac.energyMeV * a * Math.cos(this.offCrest(t, sp) * DEG);
  }

  /**
   * Linac-to-ring efficiency, %: booster capture (linac energy within the
   * booster acceptance, trajectory at the injection BPMs) times ring capture
   * (booster energy within the ring acceptance, kickers and septum at their
   * settings, no screen in the beam). The gun charge sets the fill rate, not this.
   */
  injectionEfficiency(t: number, sp: Setpoints): number {
    const linac = this.facility.spec.linac;
    const inj = this.facility.spec.injector;
    const dE = this.level(this.energy, t, sp) - linac.energyMeV;
    const dRing = 100 * this.energyError("booster", t, sp);
    let sumSq = 0;
    for (const bpm of this.injectionBpms) sumSq += this.orbit(bpm, t, sp) ** 2;
    // A screen in the beam intercepts it; kickers and septum must match the stored orbit.
    if (this.screens.some((d) => sp.at(d, t) === "IN")) return 0;
    let pulsed = 0;
    for (const { def, tolerance } of this.pulsed) {
      const rel = this.delta(def, t, sp) / (num(this.initial.get(def.name)) || 1);
      pulsed += (rel / tolerance) ** 2;
    }
    return linac.injectionEfficiencyPct * Math.exp(-((dE / linac.energyAcceptanceMeV) ** 2)) *
      Math.exp(-((dRing / inj.ringEnergyAcceptancePct) ** 2)) *
      Math.exp(-sumSq / (2 * inj.orbitToleranceMm ** 2)) * Math.exp(-pulsed);
  }

  private turnByTurn(
    def: DeviceDef,
    t: number,
    sp: Setpoints,
    closed: number,
    noisy: boolean,
  ): number[] {
    const nu = this.tunes(t, sp)[def.plane === "V" ? 1 : 0] ?? 0.25;
    const phase = 2 * Math.PI * uniform(this.seed, def.key, t, 0x7b7);
    const sigma = def.spec.sigma ?? 0;
    const out: number[] = [];
    for (let i = 0; i < (def.spec.len ?? 256); i++) {
      const beat = TBT_AMPLITUDE_MM * Math.exp(-i / 120) * Math.cos(2 * Math.PI * nu * i + phase);
      out.push(closed + beat + (noisy ? sigma * gauss(this.seed, hashNumbers(def.key, i), t) : 0));
    }
    return out;
  }

  private probe(def: DeviceDef, t: number, voltage: number, noisy: boolean): number[] {
    const phase = 2 * Math.PI * uniform(this.seed, def.key, t, 0x9b0);
    const sigma = def.spec.sigma ?? 0;
    const out: number[] = [];
    for (let i = 0; i < (def.spec.len ?? 256); i++) {
      // Klystron power-supply ripple shows as a slow modulation of the field envelope.
      const ripple = 1 + 0.004 * Math.sin((2 * Math.PI * i) / 64 + phase);
      out.push(
        voltage * ripple + (noisy ? sigma * gauss(this.seed, hashNumbers(def.key, i), t) : 0),
      );
    }
    return out;
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

/** Alarm severity and status of a value against the device's thresholds or enum states. */
export function alarmOf(def: DeviceDef, value: Value | null): Alarm {
  if (typeof value === "string") {
    const severity = def.labelSeverity.get(value) ?? "NONE";
    return { severity, status: severity === "NONE" ? "NO_ALARM" : "STATE" };
  }
  const a = def.info.alarm;
  if (typeof value !== "number" || a === undefined) return { severity: "NONE", status: "NO_ALARM" };
  if (a.hihi !== undefined && value >= a.hihi) return { severity: "MAJOR", status: "HIHI" };
  if (a.lolo !== undefined && value <= a.lolo) return { severity: "MAJOR", status: "LOLO" };
  if (a.high !== undefined && value >= a.high) return { severity: "MINOR", status: "HIGH" };
  if (a.low !== undefined && value <= a.low) return { severity: "MINOR", status: "LOW" };
  return { severity: "NONE", status: "NO_ALARM" };
}

function initialSetpoints(facility: Facility, seed: number): Map<string, number | string> {
  const out = new Map<string, number | string>();
  for (const def of facility.devices) {
    if (def.model !== "set") continue;
    const init = def.spec.init ?? 0;
    if (typeof init === "string") {
      out.set(def.name, init);
      continue;
    }
    const spread = def.spec.initSpread ?? 0;
    const value = init + spread * (2 * uniform(seed, def.key, 0x1417) - 1);
    out.set(def.name, round(value, def.info.precision ?? 3));
  }
  return out;
}

function num(v: Value | null | undefined): number {
  return typeof v === "number" ? v : 0;
}

function plus(v: Value, delta: number): Value {
  return typeof v === "number" ? v + delta : v;
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
