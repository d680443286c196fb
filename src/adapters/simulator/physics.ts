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
import { gauss, hashNumbers, smooth, uniform } from "./noise.ts";
import { buildOptics, type Optics } from "./optics.ts";

/** Setpoint values in force at a given time (the write history, or just the initial values). */
export interface Setpoints {
  at(def: DeviceDef, t: number): number | string;
}

/** An alarm state. */
export interface Alarm {
  severity: Severity;
  status: string;
}

const DAY_MS = 24 * HOUR_MS;
const DEG = Math.PI / 180;
/** Orbit excursion (mm) at which beam losses double. */
const LOSS_APERTURE_MM = 1;
/** Orbit tolerance (mm rms) of injection into the ring. */
const INJECTION_APERTURE_MM = 1.5;
const TBT_AMPLITUDE_MM = 0.3;

/** The simulated machine's physics for one seed. */
export class Physics {
  readonly optics: Optics;
  /** RF phase (deg) of maximum energy gain; the initial setpoint sits a few degrees off it. */
  readonly onCrestDeg: number;
  readonly initial: ReadonlyMap<string, number | string>;
  private readonly phase: DeviceDef;
  private readonly amplitude: DeviceDef;
  private readonly energy: DeviceDef;
  private readonly dcct: DeviceDef;
  private readonly injectionBpms: readonly DeviceDef[];

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
    this.injectionBpms = ["LINAC:BPM:20:X", "LINAC:BPM:20:Y", "BTS:BPM:08:X", "BTS:BPM:08:Y"].map(
      need,
    );
    const [lo = 3, hi = 5] = facility.spec.linac.detuneDeg;
    const detune = lo + (hi - lo) * uniform(seed, 0xc2e57);
    this.onCrestDeg = round(num(this.initial.get(this.phase.name)) - detune, 2);
  }

  /** The value of `def` at time `t` (epoch ms); `noisy` false gives the noise-free trajectory. */
  value(def: DeviceDef, t: number, sp: Setpoints, noisy = true): Value {
    let v = this.base(def, t, sp, noisy);
    if (Array.isArray(v) || typeof v === "boolean") return v;
    for (const effect of this.book.effectsAt(def.name, t)) v = applyEffect(effect, v, t);
    if (typeof v === "number" && !def.info.writable) {
      const { min = -Infinity, max = Infinity } = def.info.limits ?? {};
      v = Math.min(max, Math.max(min, v));
    }
    return v;
  }

  /** Closed orbit at a BPM (mm) without noise. */
  orbit(def: DeviceDef, t: number, sp: Setpoints): number {
    let x = this.optics.offset.get(def.name) ?? 0;
    for (const term of this.optics.terms.get(def.name) ?? []) {
      const kick = num(sp.at(term.corrector, t)) - num(this.initial.get(term.corrector.name));
      x += term.r * kick;
    }
    return x;
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
        return def.source ? plus(this.value(def.source, t, sp, noisy), noise) : 0;
      case "analog":
        if (s.log) {
          const decades = (s.spread ?? 0) * scatter + (s.drift ?? 0) * this.wander(def, t);
          return (s.nom ?? 1) *
            10 ** (decades + (noisy ? (s.sigma ?? 0) * gauss(this.seed, def.key, t) : 0));
        }
        return (s.nom ?? 0) * (1 + (s.spread ?? 0) * scatter) + this.drift(def, t) + noise;
      case "follow": {
        const gain = (s.gain ?? 1) * (1 + (s.spread ?? 0) * scatter);
        const ratio = Math.abs(source()) / (s.ref ?? 1);
        return (s.nom ?? 0) + gain * ratio ** (s.pow ?? 1) + this.drift(def, t) + noise;
      }
      case "bpm":
        return this.orbit(def, t, sp) + noise;
      case "arc-orbit": // generated arcs (scale.ts)
        return arcOrbit(
          def,
          this.seed,
          this.facility.spec.orbitOffsetMm,
          (c) => this.kick(c, t, sp),
        ) +
          noise;
      case "arc-energy":
        return arcEnergy(
          def,
          this.seed,
          (c) => num(sp.at(c, t)),
          (c) => num(this.initial.get(c.name)),
        ) +
          noise;
      case "tbt":
        return this.turnByTurn(def, t, sp, source(), noisy);
      case "probe":
        return this.probe(def, t, source(), noisy);
      case "blm":
        return this.loss(def, t, sp) + noise;
      case "energy":
        return this.beamEnergy(t, sp) + this.drift(def, t) +
          (noisy ? this.facility.spec.linac.energyNoiseMeV * gauss(this.seed, def.key, t) : 0);
      case "espread":
        return (s.nom ?? 0) + (s.gain ?? 0) * Math.abs(Math.sin(this.offCrest(t, sp) * DEG)) +
          noise;
      case "injeff":
        return this.injectionEfficiency(t, sp) + noise;
      case "dcct": {
        // Top-up: the current decays by `gain` mA over each `ref`-second injection cycle.
        const cycle = ((t / ((s.ref ?? 120) * 1000)) % 1 + 1) % 1;
        return (s.nom ?? 300) - (s.gain ?? 1) * cycle + noise;
      }
      case "lifetime": {
        if (num(this.value(this.dcct, t, sp, false)) < 1) return 0;
        return (s.nom ?? 10) * (1 + 0.05 * scatter) + this.drift(def, t) + noise;
      }
      case "tune": {
        let nu = s.nom ?? 0;
        for (const term of this.optics.tune.get(def.name) ?? []) {
          const i0 = num(this.initial.get(term.magnet.name)) || 1;
          nu += (term.k * (num(sp.at(term.magnet, t)) - i0)) / i0;
        }
        return (((nu + noise) % 1) + 1) % 1;
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

  /** A setpoint's change from its initial value at time `t`. */
  private kick(def: DeviceDef, t: number, sp: Setpoints): number {
    return num(sp.at(def, t)) - num(this.initial.get(def.name));
  }

  /** Phase distance from crest (deg), from the setpoints. */
  private offCrest(t: number, sp: Setpoints): number {
    return num(sp.at(this.phase, t)) - this.onCrestDeg;
  }

  /** E = E0 · A/A0 · cos(φ − φ_crest), without noise or drift. */
  beamEnergy(t: number, sp: Setpoints): number {
    const linac = this.facility.spec.linac;
    const a = num(sp.at(this.amplitude, t)) / linac.amplitudePct;
    return linac.energyMeV * a * Math.cos(this.offCrest(t, sp) * DEG);
  }

  private injectionEfficiency(t: number, sp: Setpoints): number {
    const linac = this.facility.spec.linac;
    const dE = num(this.value(this.energy, t, sp, false)) - linac.energyMeV;
    let sumSq = 0;
    for (const bpm of this.injectionBpms) sumSq += this.orbit(bpm, t, sp) ** 2;
    return linac.injectionEfficiencyPct * Math.exp(-((dE / linac.energyAcceptanceMeV) ** 2)) *
      Math.exp(-sumSq / (2 * INJECTION_APERTURE_MM ** 2));
  }

  private loss(def: DeviceDef, t: number, sp: Setpoints): number {
    const s = def.spec;
    const bpms = this.optics.blmBpms.get(def.name);
    let excursion = 0;
    if (bpms) {
      excursion = (this.orbit(bpms[0], t, sp) ** 2 + this.orbit(bpms[1], t, sp) ** 2) /
        LOSS_APERTURE_MM ** 2;
    }
    const beam = def.section === "RING" ? num(this.value(this.dcct, t, sp, false)) / 300 : 1;
    return (s.nom ?? 10) * (1 + (s.spread ?? 0) * gauss(this.seed, def.key, 0x5ca7)) *
      (1 + excursion) * beam;
  }

  private turnByTurn(
    def: DeviceDef,
    t: number,
    sp: Setpoints,
    closed: number,
    noisy: boolean,
  ): number[] {
    const tune = this.facility.byName.get(def.plane === "V" ? "RING:TUNE:Y" : "RING:TUNE:X");
    const nu = tune ? num(this.value(tune, t, sp, false)) : 0.25;
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
  private drift(def: DeviceDef, t: number): number {
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
