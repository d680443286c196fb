/**
 * Linear optics of the simulated machine, evaluated on the lattice of
 * `lattice.ts`: orbit response, dispersion and tune response.
 *
 * - Transfer lines and the linac (an open trajectory): a kick θ at j moves a
 *   BPM i downstream on the same beam path by
 *   x = √(βᵢβⱼ·Eⱼ/Eᵢ)·sin(ψᵢ − ψⱼ)·θ — the factor √(Eⱼ/Eᵢ) is adiabatic
 *   damping in the linac — and leaves BPMs upstream alone.
 * - The ring (a closed orbit): x = √(βᵢβⱼ)/(2 sin πν)·cos(|ψᵢ − ψⱼ| − πν)·θ
 *   with ν the live tune (phases scale with it).
 * - Dispersion: x = η·δ, with δ the relative energy error of the beam.
 * - Tune: Δν_x = +Σ βₓ·ΔK·L/4π and Δν_y = −Σ β_y·ΔK·L/4π over a
 *   quadrupole family's magnets.
 *
 * With β in metres, kicks in mrad give positions in mm.
 *
 * @module
 */

import type { DeviceDef, Facility } from "./facility.ts";
import { buildLattice, type Lattice, type LatticePoint, type LatticeSection } from "./lattice.ts";
import { gauss } from "./noise.ts";

/** One kick source's contribution to one BPM reading. */
export interface Term {
  /** The corrector's setpoint device (or an insertion device's gap setpoint). */
  readonly corrector: DeviceDef;
  /** Line: response in mm/mrad. Ring: √(βᵢβⱼ) in m, the tune-independent part. */
  readonly amplitude: number;
  /** Ring: |ψᵢ − ψⱼ| as a fraction of the whole ring's phase advance. */
  readonly phaseFraction: number;
  /** Plane: 0 horizontal, 1 vertical. */
  readonly plane: number;
}

/** One quadrupole family's contribution to the tunes. */
export interface TuneTerm {
  readonly magnet: DeviceDef;
  /** Normalised gradient at the initial current, 1/m². */
  readonly k1: number;
  /** Σ β·L/4π over the family's magnets [H, V], m²: Δν = ±this·ΔK. */
  readonly weight: readonly [number, number];
}

/** Everything the physics needs to turn corrector and magnet settings into orbit and tune. */
export interface Optics {
  readonly lattice: Lattice;
  /** Orbit terms per BPM position device (X or Y). */
  readonly terms: ReadonlyMap<string, readonly Term[]>;
  /** Insertion-device kick terms per ring BPM position device. */
  readonly idTerms: ReadonlyMap<string, readonly Term[]>;
  /** Orbit per BPM with the initial corrector settings (offsets and residual orbit), mm. */
  readonly offset: ReadonlyMap<string, number>;
  /** Quadrupole families seen by the ring tunes. */
  readonly tune: readonly TuneTerm[];
  /** The BPM (X, Y) nearest each beam-loss monitor. */
  readonly blmBpms: ReadonlyMap<string, readonly [DeviceDef, DeviceDef]>;
  /** The ring's tunes with the initial settings (integer and fractional part) [H, V]. */
  readonly ringTunes: readonly [number, number];
}

/** Builds the optics for a facility and seed. */
export function buildOptics(facility: Facility, seed: number): Optics {
  const lattice = buildLattice(facility);
  const terms = new Map<string, Term[]>();
  const idTerms = new Map<string, Term[]>();
  const offset = new Map<string, number>();
  const blmBpms = new Map<string, readonly [DeviceDef, DeviceDef]>();
  const ring = [...lattice.sections.values()].find((s) => s.spec.kind === "ring");
  const bpms = facility.devices.filter((d) =>
    d.role === "bpm" && (d.suffix === "X" || d.suffix === "Y") && lattice.of(d) !== undefined
  );
  const correctors = facility.devices.filter((d) =>
    d.role === "corrector" && d.suffix === "SETPT" && lattice.of(d) !== undefined
  );
  const gaps = facility.devices.filter((d) => d.role === "insertion" && d.suffix === "GAP:SETPT");
  for (const bpm of bpms) {
    const at = lattice.of(bpm) as LatticePoint;
    const plane = bpm.plane === "V" ? 1 : 0;
    const list: Term[] = [];
    for (const cor of correctors) {
      if ((cor.plane === "V" ? 1 : 0) !== plane) continue;
      const term = kickTerm(lattice, at, lattice.of(cor) as LatticePoint, cor, plane);
      if (term !== undefined) list.push(term);
    }
    terms.set(bpm.name, list);
    if (ring !== undefined && at.section === ring.name) {
      const ids: Term[] = [];
      for (const gap of gaps) {
        const term = kickTerm(lattice, at, lattice.of(gap) as LatticePoint, gap, plane);
        if (term !== undefined) ids.push(term);
      }
      idTerms.set(bpm.name, ids);
    }
    offset.set(bpm.name, facility.spec.orbitOffsetMm * gauss(seed, bpm.key, 0x0ff5e7));
  }
  for (const section of lattice.sections.keys()) {
    const inSection = facility.devices.filter((d) => d.section === section);
    const bpmX = inSection.filter((d) => d.role === "bpm" && d.suffix === "X");
    const bpmY = inSection.filter((d) => d.role === "bpm" && d.suffix === "Y");
    const blms = inSection.filter((d) => d.role === "blm");
    for (const blm of blms) {
      const i = Math.min(
        bpmX.length - 1,
        Math.floor(((blm.index - 0.5) * bpmX.length) / blms.length),
      );
      const x = bpmX[i];
      const y = bpmY[i];
      if (x !== undefined && y !== undefined) blmBpms.set(blm.name, [x, y]);
    }
  }
  const turns = ring?.spec.phaseTurns ?? [0, 0];
  return {
    lattice,
    terms,
    idTerms,
    offset,
    tune: ring ? tuneTerms(facility, ring) : [],
    blmBpms,
    ringTunes: [turns[0] ?? 0, turns[1] ?? 0],
  };
}

/** The kick term of a source at `from` on a BPM at `to`, or undefined when it cannot reach it. */
function kickTerm(
  lattice: Lattice,
  to: LatticePoint,
  from: LatticePoint,
  source: DeviceDef,
  plane: number,
): Term | undefined {
  const bpmSection = lattice.sections.get(to.section) as LatticeSection;
  const sourceSection = lattice.sections.get(from.section) as LatticeSection;
  const beta = Math.sqrt((to.beta[plane] ?? 1) * (from.beta[plane] ?? 1));
  if (bpmSection.spec.kind === "ring") {
    if (from.section !== to.section) return undefined;
    const total = bpmSection.advance[plane] ?? 1;
    const phaseFraction = Math.abs((to.phase[plane] ?? 0) - (from.phase[plane] ?? 0)) / total;
    return { corrector: source, amplitude: beta, phaseFraction, plane };
  }
  if (!onPath(lattice, sourceSection, bpmSection)) return undefined;
  if (to.path <= from.path) return undefined; // causality: a kick cannot move the beam upstream
  const damping = Math.sqrt(from.energyMeV / to.energyMeV);
  const r = beta * damping * Math.sin((to.phase[plane] ?? 0) - (from.phase[plane] ?? 0));
  return { corrector: source, amplitude: r, phaseFraction: 0, plane };
}

/** True when `upstream` is `section` or a section it continues. */
function onPath(lattice: Lattice, upstream: LatticeSection, section: LatticeSection): boolean {
  let s: LatticeSection | undefined = section;
  while (s !== undefined) {
    if (s === upstream) return true;
    s = s.spec.follows === undefined ? undefined : lattice.sections.get(s.spec.follows);
  }
  return false;
}

/**
 * Response (mm/mrad) of a term at ring tune `nu` (integer + fraction); for a
 * line term, its fixed response.
 */
export function termResponse(term: Term, ringKind: boolean, nu: number): number {
  if (!ringKind) return term.amplitude;
  const dpsi = 2 * Math.PI * nu * term.phaseFraction;
  return (term.amplitude / (2 * Math.sin(Math.PI * nu))) * Math.cos(dpsi - Math.PI * nu);
}

function tuneTerms(facility: Facility, ring: LatticeSection): TuneTerm[] {
  const out: TuneTerm[] = [];
  for (const q of ring.spec.quads ?? []) {
    const magnet = facility.byName.get(`${q.family}:CURRENT`);
    if (magnet === undefined) {
      throw new Error(`Optics of ${ring.name}: quadrupole family ${q.family} has no :CURRENT`);
    }
    const spacing = ring.spec.lengthM / q.count;
    const weight: [number, number] = [0, 0];
    for (let i = 0; i < q.count; i++) {
      const at = ring.at((q.offsetM + i * spacing) % ring.spec.lengthM);
      weight[0] += (at.beta[0] * q.lengthM) / (4 * Math.PI);
      weight[1] += (at.beta[1] * q.lengthM) / (4 * Math.PI);
    }
    out.push({ magnet, k1: q.k1, weight });
  }
  return out;
}
