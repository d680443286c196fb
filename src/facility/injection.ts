/**
 * The injector's side of the physics: the linac's energy from its RF, the
 * energy error each section's beam carries, and how much of the linac's beam
 * the ring captures.
 *
 * @module
 */
import type { DeviceDef } from "./facility.ts";
import { uniform } from "./noise.ts";
import type { Machine } from "./machine.ts";
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
  private readonly boosterDipole: DeviceDef | undefined;
  private readonly moFreq: DeviceDef | undefined;
  private readonly injectionBpms: readonly DeviceDef[];
  private readonly screens: readonly DeviceDef[];
  private readonly pulsed: readonly { def: DeviceDef; tolerance: number }[];
  /** Linac energy with the initial settings, MeV: the reference of the dispersion downstream. */
  private readonly linacEnergy0: number;

  constructor(private readonly physics: Machine) {
    const facility = physics.facility;
    const need = (name: string) => {
      const def = facility.byName.get(name);
      if (def === undefined) throw new Error(`The facility definition lacks ${name}`);
      return def;
    };
    this.phase = need("RF:PHASE:SETPT");
    this.amplitude = need("RF:AMPL:SETPT");
    this.energy = need("DIAG:ENERGY:MEAS");
    this.boosterDipole = facility.byName.get("BOOSTER:DIPOLE:CURRENT");
    this.moFreq = facility.byName.get("RF:MO:FREQ");
    this.injectionBpms = facility.spec.injector.injectionBpms.map(need);
    const [lo = 3, hi = 5] = facility.spec.linac.detuneDeg;
    const detune = lo + (hi - lo) * uniform(physics.seed, 0xc2e57);
    this.onCrestDeg = round(num(physics.initial.get(this.phase.name)) - detune, 2);
    this.linacEnergy0 = facility.spec.linac.energyMeV * Math.cos(detune * DEG);
    this.screens = facility.devices.filter((d) => /^DIAG:SCREEN:\d+:POS$/.test(d.name));
    this.pulsed = facility.devices.flatMap((d) =>
      /^BTS:KICKER:\d+:VOLT:SETPT$/.test(d.name)
        ? [{ def: d, tolerance: KICKER_TOLERANCE }]
        : d.name === "BTS:SEPTUM:CURRENT"
        ? [{ def: d, tolerance: SEPTUM_TOLERANCE }]
        : []
    );
  }

  /** Relative energy error δ of the beam a section sees. */
  energyError(source: string | undefined, t: number, sp: Setpoints): number {
    if (source === "linac") return this.beamEnergy(t, sp) / this.linacEnergy0 - 1;
    if (source === "booster" && this.boosterDipole !== undefined) {
      return this.physics.delta(this.boosterDipole, t, sp) /
        (num(this.physics.initial.get(this.boosterDipole.name)) || 1);
    }
    if (source === "ring" && this.moFreq !== undefined) {
      // δ = −(Δf/f)/α: a higher RF frequency pulls the beam onto a shorter, lower-energy orbit.
      const f0 = this.moFreq.spec.nom ?? 1;
      const df = this.physics.level(this.moFreq, t, sp) / f0 - 1;
      return -df / this.physics.facility.spec.ring.momentumCompaction;
    }
    return 0;
  }

  /** Phase distance from crest (deg), from where the RF actually is. */
  offCrest(t: number, sp: Setpoints): number {
    return num(this.physics.actual(this.phase, t, sp)) - this.onCrestDeg;
  }

  /** E = E0 · A/A0 · cos(φ − φ_crest), without noise or drift. */
  beamEnergy(t: number, sp: Setpoints): number {
    const linac = this.physics.facility.spec.linac;
    const a = num(this.physics.actual(this.amplitude, t, sp)) / linac.amplitudePct;
    return linac.energyMeV * a * Math.cos(this.offCrest(t, sp) * DEG);
  }

  /**
   * Linac-to-ring efficiency, %: booster capture (linac energy within the
   * booster acceptance, trajectory at the injection BPMs) times ring capture
   * (booster energy within the ring acceptance, kickers and septum at their
   * settings, no screen in the beam). The gun charge sets the fill rate, not this.
   */
  injectionEfficiency(t: number, sp: Setpoints): number {
    const linac = this.physics.facility.spec.linac;
    const inj = this.physics.facility.spec.injector;
    const dE = this.physics.level(this.energy, t, sp) - linac.energyMeV;
    const dRing = 100 * this.energyError("booster", t, sp);
    let sumSq = 0;
    for (const bpm of this.injectionBpms) sumSq += this.physics.orbit(bpm, t, sp) ** 2;
    // A screen in the beam intercepts it; kickers and septum must match the stored orbit.
    if (this.screens.some((d) => sp.at(d, t) === "IN")) return 0;
    let pulsed = 0;
    for (const { def, tolerance } of this.pulsed) {
      const rel = this.physics.delta(def, t, sp) / (num(this.physics.initial.get(def.name)) || 1);
      pulsed += (rel / tolerance) ** 2;
    }
    return linac.injectionEfficiencyPct * Math.exp(-((dE / linac.energyAcceptanceMeV) ** 2)) *
      Math.exp(-((dRing / inj.ringEnergyAcceptancePct) ** 2)) *
      Math.exp(-sumSq / (2 * inj.orbitToleranceMm ** 2)) * Math.exp(-pulsed);
  }
}
