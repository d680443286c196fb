/**
 * The instruments whose readings are computed from the beam rather than
 * measured on one device: turn-by-turn BPM buffers, the photon BPMs of the
 * front ends, the photon shutters, cooling return temperatures, the linac's
 * screens and the booster's ramp waveforms.
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import { laggedSignal } from "./dynamics.ts";
import type { Machine } from "./machine.ts";
import { gauss, uniform } from "./noise.ts";
import { gamma } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import { num, turnByTurnWave } from "./signals.ts";

/** Normalised emittance of the linac's beam, mm·mrad. */
const LINAC_EMITTANCE_MM_MRAD = 5;
/** Photon shutters: reopened once the ring is this close to its target after a refill. */
const REFILLED = 0.99;
const SHUTTER_LOOKBACK = 60;
const SHUTTER_STEP_MS = 30_000;

/** What the instruments read of the machine: the whole of it, and the stored current. */
type InstrumentMachine = Machine & {
  readonly beam: { current(t: number, sp: Setpoints): number };
};

/** The computed instruments of one machine. */
export class Instruments {
  private readonly golden = new Map<string, number>();

  constructor(private readonly m: InstrumentMachine) {}

  /**
   * Turn-by-turn positions after the last pinger kick: the closed orbit plus
   * A·√(βᵢ/⟨β⟩)·e^(−n/120)·cos(2πν·n + ψᵢ + φ₀), with the lattice's phase ψᵢ
   * (scaled to the live tune) and one φ₀ per acquisition for every BPM.
   */
  turnByTurn(def: DeviceDef, t: number, sp: Setpoints, noisy: boolean): number[] {
    const m = this.m;
    const bpm = def.source;
    const at = bpm ? m.optics.lattice.of(bpm) : undefined;
    const plane = def.plane === "V" ? 1 : 0;
    const closed = bpm ? m.orbit.bpm(bpm, t, sp) : 0;
    const ring = m.optics.ring?.ring;
    if (at === undefined || ring === undefined) {
      return turnByTurnWave(def, m.seed, t, 0, 0, 0, closed, noisy);
    }
    const nu = m.tunes(t, sp)[plane] ?? 0;
    const nu0 = ring.tunes[plane] ?? nu;
    const meanBeta = ring.circumferenceM / (2 * Math.PI * nu0);
    const amplitude = m.facility.spec.ring.tbtAmplitudeMm *
      Math.sqrt((at.beta[plane] ?? 0) / meanBeta);
    const phase = ((at.phase[plane] ?? 0) * nu) / nu0 +
      2 * Math.PI * uniform(m.seed, 0x7b7, plane, Math.floor(t / 1000));
    return turnByTurnWave(def, m.seed, t, nu, amplitude, phase, closed, noisy);
  }

  /**
   * A photon BPM, µm: where the photon beam lands at the front end, x + L·x'
   * of the electron orbit at the beamline's source point (L the lever arm),
   * against the golden orbit it was referenced to.
   */
  photonBpm(def: DeviceDef, t: number, sp: Setpoints): number {
    const orbit = this.m.orbit;
    const beamline = def.prefix;
    const src = this.m.optics.lattice.sources.get(beamline);
    if (src === undefined) return 0;
    const plane = def.suffix.endsWith("Y") ? 1 : 0;
    const x = orbit.position(src.at, plane, t, sp) + src.armM * orbit.angle(src.at, plane, t, sp);
    const key = `${beamline}:${plane}`;
    let ref = this.golden.get(key);
    if (ref === undefined) {
      ref = orbit.golden(src.at, plane) + src.armM * orbit.goldenAngle(src.at, plane);
      this.golden.set(key, ref);
    }
    return 1000 * (x - ref);
  }

  /**
   * The front ends' photon shutters: closed by the crew when the stored beam
   * falls below the top-up threshold (a refill from nothing is done with the
   * shutters closed) and reopened once the ring is full again.
   */
  shutter(t: number, sp: Setpoints): string {
    const ring = this.m.ring;
    if (ring === undefined) return "OPEN";
    const full = REFILLED * ring.targetMA;
    for (let k = 0; k <= SHUTTER_LOOKBACK; k++) {
      const i = this.m.beam.current(t - k * SHUTTER_STEP_MS, sp);
      if (i < ring.topUpMinMA) return "CLOSED";
      if (i >= full) return "OPEN";
    }
    return "OPEN";
  }

  /**
   * A cooling return temperature: the supply temperature plus the circuit's
   * heat load over its flow, ΔT = ΔT₀·F₀/F, through the water's thermal lag.
   */
  coolingReturn(def: DeviceDef, t: number, sp: Setpoints): number {
    const m = this.m;
    const s = def.spec;
    const flow = def.source;
    const supply = m.facility.byName.get(`${def.prefix}:TEMP:SUP`);
    const scatter = gauss(m.seed, def.key, 0x5ca7);
    const nominal = (s.nom ?? 0) * (1 + (s.spread ?? 0) * scatter);
    const sup0 = supply ? (supply.spec.nom ?? 0) : s.ref ?? 0;
    const sup = supply ? m.level(supply, t, sp) : s.ref ?? 0;
    if (flow === undefined) return nominal;
    const ratio = (u: number) => {
      const f0 = m.baseLevel(flow, u, sp);
      const f = m.level(flow, u, sp);
      return f > 0 ? f0 / f : 10;
    };
    return sup + (nominal - sup0) * laggedSignal(s.lag ?? 300, t, ratio);
  }

  /** True when a screen's actuator is out of the beam (its camera sees nothing). */
  screenOut(def: DeviceDef, t: number, sp: Setpoints): boolean {
    const pos = this.m.facility.byName.get(`${def.prefix}:POS`);
    return pos !== undefined && sp.at(pos, t) !== "IN";
  }

  /**
   * The rms beam size on a screen, mm: √(ε·β + (η·σ_δ)²) with the linac
   * beam's geometric emittance at the screen's energy, β beaten by the linac
   * quadrupoles changed upstream (Δβ/β = −β_q·ΔKL·sin 2(ψ − ψ_q)).
   */
  screenSize(def: DeviceDef, t: number, sp: Setpoints): number {
    const m = this.m;
    const at = m.optics.lattice.of(def);
    if (at === undefined) return 0;
    const plane = def.suffix.endsWith("Y") ? 1 : 0;
    let beat = 0;
    for (const q of m.facility.catalogue) {
      if (q.role !== "quad" || q.suffix !== "CURRENT" || q.section !== "LINAC") continue;
      const qa = m.optics.lattice.of(q);
      if (qa === undefined || qa.path >= at.path || at.section === "BTS") continue;
      const i0 = num(m.initial.get(q.name)) || 1;
      const dkl = ((q.index % 2 === 1 ? 0.3 : -0.3) * m.delta(q, t, sp)) / i0;
      if (dkl === 0) continue;
      beat -= (plane === 0 ? 1 : -1) * (qa.beta[plane] ?? 0) * dkl *
        Math.sin(2 * ((at.phase[plane] ?? 0) - (qa.phase[plane] ?? 0)));
    }
    const emittance = (LINAC_EMITTANCE_MM_MRAD * 1e-6) / gamma(at.energyMeV); // m·rad
    const beta = (at.beta[plane] ?? 0) * (1 + beat);
    const spread = m.facility.byName.get("DIAG:ENERGY:SPREAD");
    const sd = spread ? m.level(spread, t, sp) / 100 : 0;
    const eta = plane === 0 ? at.eta : 0;
    return 1000 * Math.sqrt(Math.max(0, emittance * beta) + (eta * sd) ** 2);
  }

  /**
   * The booster's ramp over one cycle (256 samples, one period of the linac's
   * repetition rate): the dipole current of a biased sine (White circuit)
   * from its injection value to its extraction value and back, or the beam
   * energy it carries (E ∝ B).
   */
  ramp(def: DeviceDef, t: number, sp: Setpoints, noisy: boolean): number[] {
    const m = this.m;
    const dipole = m.facility.byName.get("BOOSTER:DIPOLE:CURRENT");
    const inj = m.facility.byName.get("BOOSTER:DIPOLE:INJ:CURRENT");
    const iExt = dipole ? num(m.actual(dipole, t, sp)) : 0;
    const iInj = inj ? num(m.actual(inj, t, sp)) : 0;
    const i0 = dipole ? num(m.initial.get(dipole.name)) || 1 : 1;
    const e0 = m.facility.spec.injector.boosterEnergyMeV;
    const energy = def.spec.units === "MeV";
    const n = def.spec.len ?? 256;
    const sigma = def.spec.sigma ?? 0;
    const out: number[] = [];
    for (let k = 0; k < n; k++) {
      const current = (iExt + iInj) / 2 - ((iExt - iInj) / 2) * Math.cos((2 * Math.PI * k) / n);
      const v = energy ? (e0 * current) / i0 : current;
      out.push(v + (noisy ? sigma * gauss(m.seed, def.key, t + k) : 0));
    }
    return out;
  }
}
