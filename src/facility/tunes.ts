/**
 * The ring's live tunes and chromaticity: the lattice's, moved by the
 * quadrupole and sextupole families, the generated arcs' magnets written
 * live, the undulators' gaps, the dipole field and the RF frequency.
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import type { ArcMagnetOptics, Machine } from "./machine.ts";
import { arcMagnet } from "./arc_physics.ts";
import { rigidityTm, undulatorFieldT } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import { num } from "./signals.ts";

/** What the tunes read of the machine. */
type TuneMachine = Pick<
  Machine,
  "facility" | "optics" | "initial" | "ring" | "actual" | "delta"
>;

/** The ring's live tunes, chromaticity and energy offsets for one machine. */
export class RingTunes {
  private readonly gaps: readonly { gap: DeviceDef; betaY: number }[];
  private readonly rfFreq: DeviceDef | undefined;
  private readonly ringDipole: DeviceDef | undefined;
  private readonly arcMagnets = new Map<string, ArcMagnetOptics | null>();
  private readonly memo = new WeakMap<
    Setpoints,
    { t: number; revision: number; nu: readonly [number, number] }
  >();

  constructor(private readonly m: TuneMachine) {
    const facility = m.facility;
    this.rfFreq = facility.byName.get("RF:MO:FREQ:SETPT");
    this.ringDipole = facility.byName.get("RING:DIPOLE:CURRENT");
    this.gaps = facility.catalogue.filter((d) => d.role === "insertion" && d.suffix === "GAP:SETPT")
      .map((gap) => ({ gap, betaY: m.optics.lattice.of(gap)?.beta[1] ?? 0 }));
  }

  /** A generated arc's quadrupole setpoint in the ring. */
  arcQuad(def: DeviceDef): ArcMagnetOptics | undefined {
    return def.role === "quad" ? this.arcMagnetOf(def) : undefined;
  }

  /** A generated arc's sextupole setpoint in the ring. */
  arcSextupole(def: DeviceDef): ArcMagnetOptics | undefined {
    return def.role === "sext" ? this.arcMagnetOf(def) : undefined;
  }

  private arcMagnetOf(def: DeviceDef): ArcMagnetOptics | undefined {
    if (def.model !== "set") return undefined;
    const known = this.arcMagnets.get(def.name);
    if (known !== undefined) return known ?? undefined;
    const magnet = arcMagnet(def);
    const at = magnet === undefined ? undefined : this.m.optics.lattice.of(def);
    let out: ArcMagnetOptics | undefined;
    if (magnet !== undefined && at !== undefined) {
      const ring = this.m.optics.ring?.ring;
      const family = [...(ring?.quads ?? []), ...(ring?.sextupoles ?? [])].find((q) =>
        q.family === magnet.like
      );
      // A trim quadrupole is off at the design optics: 0.3 /m² per initial current's worth.
      const design = family?.strength ?? (def.role === "quad" ? 0.3 : 0);
      const i0 = num(this.m.initial.get(def.name)) || 1;
      out = { at, lengthM: magnet.lengthM, dk: (deltaA) => (design * deltaA) / i0 };
    }
    this.arcMagnets.set(def.name, out ?? null);
    return out;
  }

  /** δ = −(Δf/f)/α_c: a higher RF frequency pulls the beam onto a shorter, lower-energy orbit. */
  rfDelta(t: number, sp: Setpoints): number {
    const f = this.rfFreq;
    const ring = this.m.ring;
    if (f === undefined || ring === undefined) return 0;
    const f0 = num(this.m.initial.get(f.name)) || 1;
    const df = num(this.m.actual(f, t, sp)) / f0 - 1;
    return df === 0 ? 0 : -df / ring.alphaC;
  }

  /** The ring dipoles' relative field change: the beam's energy follows it at fixed RF frequency. */
  dipoleDelta(t: number, sp: Setpoints): number {
    const d = this.ringDipole;
    if (d === undefined) return 0;
    return this.m.delta(d, t, sp) / (num(this.m.initial.get(d.name)) || 1);
  }

  /** The ring's live tunes (integer + fraction) [H, V], without noise. */
  tunes(t: number, sp: Setpoints): readonly [number, number] {
    if ((sp.revision ?? 0) === 0) return this.m.optics.ringTunes;
    const memo = this.memo.get(sp);
    const revision = sp.revision ?? 0;
    if (memo !== undefined && memo.t === t && memo.revision === revision) return memo.nu;
    const nu = this.computeTunes(t, sp);
    this.memo.set(sp, { t, revision, nu });
    return nu;
  }

  /**
   * Tunes: the lattice's, plus Σ±β·ΔK·L/4π of the quadrupole families, the
   * undulators' vertical focusing, ξ₀·δ_B for a dipole change at fixed
   * quadrupoles and ξ·δ for an RF frequency change (the orbit then also
   * moves through the sextupoles).
   */
  private computeTunes(t: number, sp: Setpoints): [number, number] {
    const m = this.m;
    const nu: [number, number] = [m.optics.ringTunes[0], m.optics.ringTunes[1]];
    for (const q of m.optics.quads) {
      const i0 = num(m.initial.get(q.magnet.name)) || 1;
      const dk = (q.strength * m.delta(q.magnet, t, sp)) / i0;
      nu[0] += q.weight[0] * dk;
      nu[1] -= q.weight[1] * dk;
    }
    for (const name of sp.written?.() ?? []) {
      const def = m.facility.byName.get(name);
      const q = def === undefined ? undefined : this.arcQuad(def);
      if (def === undefined || q === undefined) continue;
      const dk = q.dk(m.delta(def, t, sp));
      nu[0] += (q.at.beta[0] * dk * q.lengthM) / (4 * Math.PI);
      nu[1] -= (q.at.beta[1] * dk * q.lengthM) / (4 * Math.PI);
    }
    const spec = m.facility.spec.ring;
    for (const { gap, betaY } of this.gaps) {
      const focus = (g: number) =>
        (betaY * spec.idLengthM * (undulatorFieldT(g, spec.idPeriodMm) /
              rigidityTm(spec.energyMeV)) ** 2) / (8 * Math.PI);
      nu[1] += focus(num(m.actual(gap, t, sp))) - focus(num(m.initial.get(gap.name)));
    }
    const natural = m.optics.ring?.ring?.naturalChromaticity ?? [0, 0];
    const xi = this.chromaticity(t, sp);
    const dB = this.dipoleDelta(t, sp);
    const dRF = this.rfDelta(t, sp);
    nu[0] += natural[0] * dB + xi[0] * dRF;
    nu[1] += natural[1] * dB + xi[1] * dRF;
    return nu;
  }

  /** Linear chromaticity [H, V]: the lattice's with the sextupoles as set, ± Σβ·η·ΔK₂L/4π. */
  chromaticity(t: number, sp: Setpoints): readonly [number, number] {
    const m = this.m;
    const xi0 = m.optics.ring?.spec.cell?.chromaticity ?? [0, 0];
    const xi: [number, number] = [xi0[0] ?? 0, xi0[1] ?? 0];
    if ((sp.revision ?? 0) === 0) return xi;
    for (const f of m.optics.sextupoles) {
      const i0 = num(m.initial.get(f.magnet.name)) || 1;
      const dk2l = (f.strength * m.delta(f.magnet, t, sp)) / i0;
      xi[0] += f.weight[0] * dk2l;
      xi[1] -= f.weight[1] * dk2l;
    }
    for (const name of sp.written?.() ?? []) {
      const def = m.facility.byName.get(name);
      const s = def === undefined ? undefined : this.arcSextupole(def);
      if (def === undefined || s === undefined) continue;
      const dk2l = s.dk(m.delta(def, t, sp));
      xi[0] += (s.at.beta[0] * s.at.eta * dk2l) / (4 * Math.PI);
      xi[1] -= (s.at.beta[1] * s.at.eta * dk2l) / (4 * Math.PI);
    }
    return xi;
  }
}
