/**
 * Linear optics of the simulated machine, evaluated on the lattice of
 * `lattice.ts`: orbit and angle responses, tune and chromaticity responses,
 * the ring's dipole errors and the transfer lines' launch errors.
 *
 * - Transfer lines and the linac (an open trajectory): a kick θ at j moves a
 *   point i downstream on the same beam path by
 *   x = √(βᵢβⱼ·Eⱼ/Eᵢ)·sin(ψᵢ − ψⱼ)·θ — the factor √(Eⱼ/Eᵢ) is adiabatic
 *   damping in the linac — and leaves points upstream alone.
 * - The ring (a closed orbit at fixed RF frequency):
 *   x = √(βᵢβⱼ)/(2 sin πν)·cos(|ψᵢ − ψⱼ| − πν)·θ − ηᵢηⱼ/(α_c·C)·θ, with ν the
 *   live tune (phases scale with it); the second term is the orbit-length
 *   change a horizontal kick makes, which moves the energy and the orbit by η·δ.
 *   The angle is x' = √(βⱼ/βᵢ)/(2 sin πν)·(−αᵢ cos Φ ∓ sin Φ)·θ − η'ᵢηⱼ/(α_c·C)·θ,
 *   Φ = |ψᵢ − ψⱼ| − πν, the sign − downstream of the kick.
 * - Dispersion: x = η·δ, with δ the relative energy error of the beam.
 * - Tune: Δν_x = +Σ βₓ·ΔK·L/4π and Δν_y = −Σ β_y·ΔK·L/4π over a
 *   quadrupole family's magnets; chromaticity Δξ_x = +Σ βₓ·η·ΔK₂L/4π,
 *   Δξ_y = −Σ β_y·η·ΔK₂L/4π over a sextupole family's.
 *
 * With β and η in metres and C in metres, kicks in mrad give positions in mm
 * and angles in mrad.
 *
 * @module
 */

import type { DeviceDef, Facility } from "./facility.ts";
import { buildLattice, type Lattice, type LatticePoint, type LatticeSection } from "./lattice.ts";
import { gauss, uniform } from "./noise.ts";

/** One quadrupole or sextupole family as the tunes and chromaticity see it. */
export interface FamilyTerm {
  /** The family's power supply setpoint (`RING:Q1:CURRENT`). */
  readonly magnet: DeviceDef;
  /** Quadrupoles: K1 (1/m²); sextupoles: K2·L per magnet (1/m²), at the initial current. */
  readonly strength: number;
  /** Quadrupoles: Σβ·L/4π [H, V] (m²); sextupoles: Σβ·η/4π [H, V] (m²), over the family. */
  readonly weight: readonly [number, number];
  /** Where the family's magnets are, for the kicks an off-centre orbit gets in them. */
  readonly points: readonly LatticePoint[];
  /** Quadrupoles: magnet length, m. */
  readonly lengthM: number;
}

/** A dipole-error kick source of the ring: where, its static kick and its wander key. */
export interface ErrorSource {
  readonly at: LatticePoint;
  readonly plane: number;
  /** Static kick, mrad. */
  readonly kick: number;
  /** Key of its slow wander. */
  readonly key: number;
}

/** Everything the physics needs to turn settings into orbit, tune and chromaticity. */
export interface Optics {
  readonly lattice: Lattice;
  /** The ring's section, when there is one. */
  readonly ring: LatticeSection | undefined;
  /** Electrical offset of every BPM position device, mm. */
  readonly offset: ReadonlyMap<string, number>;
  /** Ring quadrupole families (the tunes) and sextupole families (the chromaticity). */
  readonly quads: readonly FamilyTerm[];
  readonly sextupoles: readonly FamilyTerm[];
  /** Dipole errors of the ring, per plane. */
  readonly errors: readonly [readonly ErrorSource[], readonly ErrorSource[]];
  /** The BPM (X, Y) nearest each beam-loss monitor. */
  readonly blmBpms: ReadonlyMap<string, readonly [DeviceDef, DeviceDef]>;
  /** The ring's tunes with the initial settings (integer and fractional part) [H, V]. */
  readonly ringTunes: readonly [number, number];
}

/** Builds the optics for a facility and seed. */
export function buildOptics(facility: Facility, seed: number): Optics {
  const lattice = buildLattice(facility);
  const ring = lattice.ring;
  const offset = new Map<string, number>();
  const blmBpms = new Map<string, readonly [DeviceDef, DeviceDef]>();
  const spec = facility.spec;
  for (const bpm of facility.catalogue) {
    if (bpm.role !== "bpm" || (bpm.suffix !== "X" && bpm.suffix !== "Y")) continue;
    const at = lattice.of(bpm);
    if (at === undefined) continue;
    // Ring BPMs: electrical offset; lines: the BPM offset against the quadrupole centres.
    const rms = at.section === ring?.name ? spec.ring.bpmOffsetMm : spec.orbitOffsetMm;
    offset.set(bpm.name, rms * gauss(seed, bpm.key, 0x0ff5e7));
  }
  for (const section of lattice.sections.keys()) {
    const inSection = facility.catalogue.filter((d) => d.section === section);
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
  const turns = ring?.ring?.tunes ?? [0, 0];
  return {
    lattice,
    ring,
    offset,
    quads: ring ? familyTerms(facility, ring, "quads") : [],
    sextupoles: ring ? familyTerms(facility, ring, "sextupoles") : [],
    errors: ring ? errorSources(facility, ring, seed) : [[], []],
    blmBpms,
    ringTunes: [turns[0] ?? 0, turns[1] ?? 0],
  };
}

/**
 * The ring's dipole errors: `errorSources` per plane at seeded places of the
 * catalogue's cells, each with a seeded static kick of rms `errorKickMrad`.
 */
function errorSources(
  facility: Facility,
  ring: LatticeSection,
  seed: number,
): [ErrorSource[], ErrorSource[]] {
  const spec = facility.spec.ring;
  const cell = ring.ring;
  const cells = ring.spec.cell?.cells ?? 1;
  const out: [ErrorSource[], ErrorSource[]] = [[], []];
  if (cell === undefined) return out;
  for (const plane of [0, 1] as const) {
    for (let i = 0; i < spec.errorSources; i++) {
      const key = 0xe770 + plane * 1000 + i;
      const s = ((i + uniform(seed, key, 0x5)) * cells * cell.cellLengthM) / spec.errorSources;
      out[plane].push({
        at: ring.at(s),
        plane,
        kick: spec.errorKickMrad * gauss(seed, key, 0x6),
        key,
      });
    }
  }
  return out;
}

function familyTerms(
  facility: Facility,
  ring: LatticeSection,
  kind: "quads" | "sextupoles",
): FamilyTerm[] {
  const optics = ring.ring;
  // The catalogue's families power the catalogue's cells (a grown ring's arcs have their own).
  const cells = ring.spec.cell?.familyCells ?? ring.spec.cell?.cells ?? 0;
  if (optics === undefined) return [];
  const out: FamilyTerm[] = [];
  const families = new Set(optics[kind].map((m) => m.family));
  for (const family of families) {
    const magnet = facility.byName.get(`${family}:CURRENT`);
    if (magnet === undefined) {
      throw new Error(`Optics of ${ring.name}: magnet family ${family} has no :CURRENT`);
    }
    const inCell = optics[kind].filter((m) => m.family === family);
    const points: LatticePoint[] = [];
    const weight: [number, number] = [0, 0];
    for (let c = 0; c < cells; c++) {
      for (const m of inCell) {
        const at = ring.at(
          c * optics.cellLengthM +
            ((m.s % optics.cellLengthM) + optics.cellLengthM) % optics.cellLengthM,
        );
        points.push(at);
        const w = kind === "quads" ? m.lengthM : at.eta;
        weight[0] += (at.beta[0] * w) / (4 * Math.PI);
        weight[1] += (at.beta[1] * w) / (4 * Math.PI);
      }
    }
    const first = inCell[0];
    out.push({
      magnet,
      strength: first?.strength ?? 0,
      weight,
      points,
      lengthM: first?.lengthM ?? 0,
    });
  }
  return out;
}

/** The ring constants the dispersion term of the closed orbit needs: α_c and C. */
export interface RingConstants {
  readonly alphaC: number;
  readonly circumferenceM: number;
  /** Design tunes [H, V]: the phases of the lattice are scaled by ν/ν₀. */
  readonly tunes: readonly [number, number];
}

/**
 * Closed-orbit response (mm/mrad) at point `i` to a kick at `j` in `plane`,
 * at the live tune `nu` (integer + fraction).
 */
export function ringResponse(
  i: LatticePoint,
  j: LatticePoint,
  plane: number,
  nu: number,
  ring: RingConstants,
): number {
  const nu0 = ring.tunes[plane] ?? nu;
  const dpsi = (Math.abs((i.phase[plane] ?? 0) - (j.phase[plane] ?? 0)) * nu) / nu0;
  const r = (Math.sqrt((i.beta[plane] ?? 0) * (j.beta[plane] ?? 0)) /
    (2 * Math.sin(Math.PI * nu))) * Math.cos(dpsi - Math.PI * nu);
  return plane === 0 ? r - (i.eta * j.eta) / (ring.alphaC * ring.circumferenceM) : r;
}

/** Closed-orbit angle response (mrad/mrad) at point `i` to a kick at `j`, as {@link ringResponse}. */
export function ringAngleResponse(
  i: LatticePoint,
  j: LatticePoint,
  plane: number,
  nu: number,
  ring: RingConstants,
): number {
  const nu0 = ring.tunes[plane] ?? nu;
  const diff = (i.phase[plane] ?? 0) - (j.phase[plane] ?? 0);
  const phi = (Math.abs(diff) * nu) / nu0 - Math.PI * nu;
  const sign = diff >= 0 ? 1 : -1;
  const r = (Math.sqrt((j.beta[plane] ?? 0) / (i.beta[plane] ?? 1)) /
    (2 * Math.sin(Math.PI * nu))) *
    (-(i.alpha[plane] ?? 0) * Math.cos(phi) - sign * Math.sin(phi));
  return plane === 0 ? r - (i.etaPrime * j.eta) / (ring.alphaC * ring.circumferenceM) : r;
}

/**
 * Trajectory response (mm/mrad) at point `i` of an open line to a kick at `j`:
 * 0 upstream or on another beam path.
 */
export function lineResponse(
  lattice: Lattice,
  i: LatticePoint,
  j: LatticePoint,
  plane: number,
): number {
  const to = lattice.sections.get(i.section);
  const from = lattice.sections.get(j.section);
  if (to === undefined || from === undefined || !onPath(lattice, from, to)) return 0;
  if (i.path <= j.path) return 0; // causality: a kick cannot move the beam upstream
  const damping = Math.sqrt(j.energyMeV / i.energyMeV);
  return Math.sqrt((i.beta[plane] ?? 1) * (j.beta[plane] ?? 1)) * damping *
    Math.sin((i.phase[plane] ?? 0) - (j.phase[plane] ?? 0));
}

/** True when `upstream` is `section` or a section it continues. */
export function onPath(
  lattice: Lattice,
  upstream: LatticeSection,
  section: LatticeSection,
): boolean {
  let s: LatticeSection | undefined = section;
  while (s !== undefined) {
    if (s === upstream) return true;
    s = s.spec.follows === undefined ? undefined : lattice.sections.get(s.spec.follows);
  }
  return false;
}

/** The first section of the beam path through `section` (where its launch error starts). */
export function pathStart(lattice: Lattice, section: LatticeSection): LatticeSection {
  let s = section;
  while (s.spec.follows !== undefined) {
    const before = lattice.sections.get(s.spec.follows);
    if (before === undefined) break;
    s = before;
  }
  return s;
}
