/**
 * The injector's side of the physics: the linac's energy from its RF, the
 * booster's ramp from the linac's energy to the ring's, the energy error each
 * section's beam carries, how much of the linac's beam the ring captures and
 * how fast injection fills the ring.
 *
 * @module
 */
import type { DeviceDef } from "./facility.ts";
import { uniform } from "./noise.ts";
import type { Machine } from "./machine.ts";
import { C_LIGHT } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import { num, round } from "./signals.ts";

const DEG = Math.PI / 180;
/** Relative kicker-voltage and septum-current errors that cost 63 % of the injected beam. */
const KICKER_TOLERANCE = 0.03;
const SEPTUM_TOLERANCE = 0.01;

/** The injector of one {@link Machine}. */
export class Injection {
  /** RF phase (deg) of maximum energy gain; the initial setpoint sits a few degrees off it. */
  readonly onCrestDeg: number;
  private readonly phase: DeviceDef;
  private readonly amplitude: DeviceDef;
  private readonly energy: DeviceDef;
  private readonly charge: DeviceDef | undefined;
  private readonly boosterDipole: DeviceDef | undefined;
  private readonly boosterInjection: DeviceDef | undefined;
  private readonly septumStatus: DeviceDef | undefined;
  private readonly injectionBpms: readonly { def: DeviceDef; plane: number }[];
  private readonly screens: readonly DeviceDef[];
  /** Kicker and septum: what the beam feels is what their readbacks read. */
  private readonly pulsed: readonly { def: DeviceDef; rdbk: DeviceDef; tolerance: number }[];
  /** Linac energy with the initial settings, MeV: the reference of the dispersion downstream. */
  private readonly linacEnergy0: number;

  constructor(private readonly m: Machine) {
    const facility = m.facility;
    const need = (name: string) => {
      const def = facility.byName.get(name);
      if (def === undefined) throw new Error(`The facility definition lacks ${name}`);
      return def;
    };
    this.phase = need("RF:PHASE:SETPT");
    this.amplitude = need("RF:AMPL:SETPT");
    this.energy = need("DIAG:ENERGY:MEAS");
    this.charge = facility.byName.get("LINAC:GUN:CHARGE");
    this.boosterDipole = facility.byName.get("BOOSTER:DIPOLE:CURRENT");
    this.boosterInjection = facility.byName.get("BOOSTER:DIPOLE:INJ:CURRENT");
    this.septumStatus = facility.byName.get("BTS:SEPTUM:STATUS");
    this.injectionBpms = facility.spec.injector.injectionBpms.map((name) => {
      const def = need(name);
      return { def, plane: def.plane === "V" ? 1 : 0 };
    });
    const [lo = 3, hi = 5] = facility.spec.linac.detuneDeg;
    const detune = lo + (hi - lo) * uniform(m.seed, 0xc2e57);
    this.onCrestDeg = round(num(m.initial.get(this.phase.name)) - detune, 2);
    this.linacEnergy0 = facility.spec.linac.energyMeV * Math.cos(detune * DEG);
    this.screens = facility.catalogue.filter((d) => /^DIAG:SCREEN:\d+:POS$/.test(d.name));
    this.pulsed = facility.catalogue.flatMap((d) => {
      const tolerance = /^BTS:KICKER:\d+:VOLT:SETPT$/.test(d.name)
        ? KICKER_TOLERANCE
        : d.name === "BTS:SEPTUM:CURRENT"
        ? SEPTUM_TOLERANCE
        : undefined;
      const rdbk = d.info.readback ? facility.byName.get(d.info.readback) : undefined;
      return tolerance === undefined || rdbk === undefined ? [] : [{ def: d, rdbk, tolerance }];
    });
  }

  /** Relative energy error δ of the beam a section sees. */
  energyError(source: string | undefined, t: number, sp: Setpoints): number {
    if (source === "linac") return this.beamEnergy(t, sp) / this.linacEnergy0 - 1;
    if (source === "booster") return this.boosterEnergy(t, sp) / this.boosterEnergy0() - 1;
    if (source === "ring") return this.m.rfDelta(t, sp);
    return 0;
  }

  /** Phase distance from crest (deg), from where the RF actually is. */
  offCrest(t: number, sp: Setpoints): number {
    return num(this.m.actual(this.phase, t, sp)) - this.onCrestDeg;
  }

  /** E = E0 · A/A0 · cos(φ − φ_crest), without noise or drift. */
  beamEnergy(t: number, sp: Setpoints): number {
    const linac = this.m.facility.spec.linac;
    const a = num(this.m.actual(this.amplitude, t, sp)) / linac.amplitudePct;
    return linac.energyMeV * a * Math.cos(this.offCrest(t, sp) * DEG);
  }

  /** The booster's extraction energy, MeV: E ∝ B ∝ the dipole current at extraction. */
  boosterEnergy(t: number, sp: Setpoints): number {
    const dipole = this.boosterDipole;
    if (dipole === undefined) return this.boosterEnergy0();
    const i0 = num(this.m.initial.get(dipole.name)) || 1;
    return (this.boosterEnergy0() * num(this.m.actual(dipole, t, sp))) / i0;
  }

  /** The energy the booster's field at injection is matched to, MeV (same magnets, same B/I). */
  boosterInjectionEnergy(t: number, sp: Setpoints): number {
    const dipole = this.boosterDipole;
    const inj = this.boosterInjection;
    if (dipole === undefined || inj === undefined) return this.m.facility.spec.linac.energyMeV;
    const i0 = num(this.m.initial.get(dipole.name)) || 1;
    return (this.boosterEnergy0() * num(this.m.actual(inj, t, sp))) / i0;
  }

  private boosterEnergy0(): number {
    return this.m.facility.spec.injector.boosterEnergyMeV;
  }

  /** The gun's bunch charge as the linac delivers it, nC (incidents included). */
  chargeNC(t: number, sp: Setpoints): number {
    return this.charge ? Math.max(0, this.m.level(this.charge, t, sp)) : 0;
  }

  /**
   * Booster capture, 0–1: the linac's energy within the booster's acceptance
   * around the energy its injection field is set for, and the trajectory at
   * the linac's and the LTB line's injection BPMs.
   */
  boosterCapture(t: number, sp: Setpoints): number {
    const linac = this.m.facility.spec.linac;
    const inj = this.m.facility.spec.injector;
    const dE = this.m.level(this.energy, t, sp) - this.boosterInjectionEnergy(t, sp);
    let sumSq = 0;
    for (const { def, plane } of this.injectionBpms) {
      if (def.section === "BTS") continue;
      const at = this.m.optics.lattice.of(def);
      if (at !== undefined) sumSq += this.m.orbit.position(at, plane, t, sp) ** 2;
    }
    return Math.exp(-((dE / linac.energyAcceptanceMeV) ** 2)) *
      Math.exp(-sumSq / (2 * inj.orbitToleranceMm ** 2));
  }

  /**
   * Linac-to-ring efficiency, %: booster capture times ring capture (the
   * booster's energy within the ring's acceptance around the stored beam's
   * energy, the BTS trajectory at its injection BPMs, kickers and septum as
   * their readbacks read them, a working septum, no screen in the beam).
   */
  injectionEfficiency(t: number, sp: Setpoints): number {
    const m = this.m;
    const linac = m.facility.spec.linac;
    const inj = m.facility.spec.injector;
    // A screen in the beam intercepts it; a septum without its pulse sends it into the wall.
    if (this.screens.some((d) => sp.at(d, t) === "IN")) return 0;
    if (this.septumStatus && m.value(this.septumStatus, t, sp, false) === "FAULT") return 0;
    const ringE = m.facility.spec.ring.energyMeV * (1 + m.energyError("ringEnergy", t, sp));
    const dRing = 100 * (this.boosterEnergy(t, sp) / ringE - 1);
    let sumSq = 0;
    for (const { def, plane } of this.injectionBpms) {
      if (def.section !== "BTS") continue;
      const at = m.optics.lattice.of(def);
      if (at !== undefined) sumSq += m.orbit.position(at, plane, t, sp) ** 2;
    }
    let pulsed = 0;
    for (const { def, rdbk, tolerance } of this.pulsed) {
      const i0 = num(m.initial.get(def.name)) || 1;
      const rel = (m.level(rdbk, t, sp) - i0) / i0;
      pulsed += (rel / tolerance) ** 2;
    }
    return linac.injectionEfficiencyPct * this.boosterCapture(t, sp) *
      Math.exp(-((dRing / inj.ringEnergyAcceptancePct) ** 2)) *
      Math.exp(-sumSq / (2 * inj.orbitToleranceMm ** 2)) * Math.exp(-pulsed);
  }

  /**
   * What injection adds to the ring while it injects, mA/s: each shot brings
   * charge × efficiency, and one nC per revolution period (µs) is one mA.
   */
  fillRateMAps(t: number, sp: Setpoints): number {
    const rate = this.m.facility.byName.get("TIMING:REP:RATE");
    const rep = rate ? num(sp.at(rate, t)) : 1;
    const revolutionUs = ((this.m.ring?.circumferenceM ?? 288) / C_LIGHT) * 1e6;
    return (rep * this.chargeNC(t, sp) * (this.injectionEfficiency(t, sp) / 100)) / revolutionUs;
  }
}
