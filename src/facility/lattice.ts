/**
 * One lattice along s: every beamline section's β and α functions, betatron
 * phase, dispersion and beam energy, and the position of every device in it.
 *
 * The storage ring is built from its magnets (`ring_lattice.ts`): a periodic
 * cell of dipoles, quadrupoles and sextupoles whose matrices give β, α, η,
 * η' and the tunes. The linac and the transfer lines use a smooth model:
 * β(s) = β₀·(1 ± a·cos(2π·p·s/L)) per plane (horizontal +, vertical −), with
 * β₀ chosen so that the phase advance ψ(s) = ∫ds/β over the section equals
 * the section's `phaseTurns`. A section may continue another (`follows`): its
 * s and phase then carry on from the end of that one, so a kick upstream
 * reaches the BPMs of both. Positions come from the device ids (BPMs and BLMs
 * centred in equal slots, correctors 0.5 m into theirs), from the ring's
 * positions within a cell, or from a section's `positions` table.
 *
 * @module
 */

import type { DeviceDef, Facility, OpticsSpec } from "./facility.ts";
import { buildRingOptics, type RingOptics } from "./ring_lattice.ts";
import { arcPoint } from "./arc_physics.ts";

/** Optics at one point of the lattice. */
export interface LatticePoint {
  readonly section: string;
  /** Position along the section, m. */
  readonly s: number;
  /** Position along the beam path (continued sections add the lengths before them), m. */
  readonly path: number;
  /** β function [horizontal, vertical], m. */
  readonly beta: readonly [number, number];
  /** α = −β'/2 [horizontal, vertical]. */
  readonly alpha: readonly [number, number];
  /** Betatron phase along the beam path [horizontal, vertical], rad. */
  readonly phase: readonly [number, number];
  /** Horizontal dispersion, m. */
  readonly eta: number;
  /** Its slope dη/ds. */
  readonly etaPrime: number;
  /** Design beam energy, MeV. */
  readonly energyMeV: number;
}

/** One section, with the tables its optics are evaluated from. */
export interface LatticeSection {
  readonly name: string;
  readonly spec: OpticsSpec;
  /** Length of the section, m. */
  readonly lengthM: number;
  /** Path length before this section (continued sections), m. */
  readonly pathStart: number;
  /** Phase before this section [H, V], rad. */
  readonly phaseStart: readonly [number, number];
  /** Total phase advance over the section [H, V], rad. */
  readonly advance: readonly [number, number];
  /** The ring's magnets and their optics, for a section of kind "ring". */
  readonly ring?: RingOptics;
  /** The optics at position `s` (m) of the section. */
  at(s: number): LatticePoint;
}

/** A beamline's source point in the ring: where its photons come from. */
export interface SourcePoint {
  readonly at: LatticePoint;
  /** Distance from the source to the beamline's photon BPM, m. */
  readonly armM: number;
}

/** The whole lattice: sections and the point of every positioned device prefix. */
export interface Lattice {
  readonly sections: ReadonlyMap<string, LatticeSection>;
  /** Optics at each device prefix placed in a section (`RING:BPM:07`, `LINAC:COR:H03`). */
  readonly points: ReadonlyMap<string, LatticePoint>;
  /** The storage ring, when the facility has one. */
  readonly ring: LatticeSection | undefined;
  /** Source points of the beamline front ends (`BL:07`), in the ring. */
  readonly sources: ReadonlyMap<string, SourcePoint>;
  /** The point of a device (by its prefix), or undefined when it is not in a section. */
  of(def: DeviceDef): LatticePoint | undefined;
}

const STEPS_PER_M = 50;

/** Builds the lattice of a facility. Throws on a section that follows an unknown one. */
export function buildLattice(facility: Facility): Lattice {
  const sections = new Map<string, LatticeSection>();
  const specs = facility.spec.optics;
  const build = (name: string, seen: Set<string>): LatticeSection => {
    const done = sections.get(name);
    if (done !== undefined) return done;
    const spec = specs[name];
    if (spec === undefined) throw new Error(`Optics section ${name} is not defined`);
    if (seen.has(name)) throw new Error(`Optics section ${name} follows itself`);
    seen.add(name);
    let pathStart = 0;
    let phaseStart: [number, number] = [0, 0];
    if (spec.follows !== undefined) {
      const before = build(spec.follows, seen);
      pathStart = before.pathStart + before.lengthM;
      phaseStart = [
        before.phaseStart[0] + before.advance[0],
        before.phaseStart[1] + before.advance[1],
      ];
    }
    const section = spec.kind === "ring"
      ? ringSection(name, spec, facility.spec.ring.bendRadiusM)
      : lineSection(name, spec, pathStart, phaseStart);
    sections.set(name, section);
    return section;
  };
  for (const name of Object.keys(specs)) build(name, new Set());
  const ring = [...sections.values()].find((s) => s.ring !== undefined);

  const points = new Map<string, LatticePoint>();
  const groups = new Map<string, DeviceDef[]>();
  for (const def of facility.catalogue) {
    if (!sections.has(def.section)) continue;
    const key = `${def.section}|${familyKey(def)}`;
    let list = groups.get(key);
    if (list === undefined) groups.set(key, list = []);
    if (!list.some((d) => d.prefix === def.prefix)) list.push(def);
  }
  for (const list of groups.values()) {
    const first = list[0];
    if (first === undefined) continue;
    const section = sections.get(first.section);
    if (section === undefined) continue;
    for (const def of list) {
      const s = section.spec.positions?.[def.prefix] ?? cellPosition(section, def) ??
        slotPosition(section.lengthM, def, list.length);
      points.set(def.prefix, section.at(s));
    }
  }
  // Devices of other families that a section's table places (screens along the injector).
  for (const section of sections.values()) {
    for (const [prefix, s] of Object.entries(section.spec.positions ?? {})) {
      if (!points.has(prefix)) points.set(prefix, section.at(s));
    }
  }
  const sources = new Map<string, SourcePoint>();
  const cell = ring?.ring;
  for (const [beamline, src] of Object.entries(ring?.spec.sources ?? {})) {
    if (ring === undefined || cell === undefined) break;
    const [c = 0, atM = 0, armM = 10] = src;
    sources.set(beamline, { at: ring.at(c * cell.cellLengthM + atM), armM });
  }
  const catalogueCells = ring?.spec.cell?.familyCells ?? ring?.spec.cell?.cells ?? 0;
  return {
    sections,
    points,
    ring,
    sources,
    // A generated arc's devices are placed in the ring's cells when first asked for.
    of: (def) =>
      points.get(def.prefix) ??
        (ring === undefined ? undefined : arcPoint(def, ring, catalogueCells)),
  };
}

/** Devices of one family share slots: the family is the prefix without its id. */
function familyKey(def: DeviceDef): string {
  return `${def.role}|${def.prefix.replace(/[A-Z]?\d+$/, "")}|${def.plane}`;
}

/**
 * A ring device's position from its family's places in a cell
 * (`cellPositions`, keyed by the prefix without its number, `RING:COR:H`):
 * device n sits in cell ⌊(n−1)/k⌋ at the ((n−1) mod k)-th place.
 */
function cellPosition(section: LatticeSection, def: DeviceDef): number | undefined {
  const table = section.spec.cellPositions;
  const ring = section.ring;
  if (table === undefined || ring === undefined || def.index === 0) return undefined;
  const places = table[def.prefix.replace(/\d+$/, "")];
  if (places === undefined || places.length === 0) return undefined;
  const i = def.index - 1;
  return Math.floor(i / places.length) * ring.cellLengthM + (places[i % places.length] ?? 0);
}

/** BPMs and other devices centred in equal slots, correctors early in theirs. */
function slotPosition(length: number, def: DeviceDef, count: number): number {
  const slot = length / count;
  const index = def.index || 1;
  return def.role === "corrector" ? slot * (index - 1) + 0.5 : slot * (index - 0.5);
}

function ringSection(name: string, spec: OpticsSpec, rho: number): LatticeSection {
  if (spec.cell === undefined) throw new Error(`Optics of ring ${name}: no "cell" defined`);
  const [nx = 0, ny = 0] = spec.phaseTurns;
  const ring = buildRingOptics(spec.cell, [nx, ny], rho);
  if (Math.abs(ring.circumferenceM - spec.lengthM) > 1e-6) {
    throw new Error(
      `Optics of ring ${name}: ${spec.cell.cells} cells of ${spec.cell.cellLengthM} m ` +
        `are not its length of ${spec.lengthM} m`,
    );
  }
  const [e0 = 1] = spec.energyMeV ?? [];
  return {
    name,
    spec,
    lengthM: ring.circumferenceM,
    pathStart: 0,
    phaseStart: [0, 0],
    advance: [2 * Math.PI * ring.tunes[0], 2 * Math.PI * ring.tunes[1]],
    ring,
    at(s: number): LatticePoint {
      const p = ring.at(s);
      return { section: name, s, path: s, ...p, energyMeV: e0 };
    },
  };
}

function lineSection(
  name: string,
  spec: OpticsSpec,
  pathStart: number,
  phaseStart: readonly [number, number],
): LatticeSection {
  const a = spec.betaBeat ?? 0;
  const p = spec.periods ?? 1;
  const L = spec.lengthM;
  const k = (2 * Math.PI * p) / L;
  const shape = (plane: number, s: number) => 1 + (plane === 0 ? a : -a) * Math.cos(k * s);
  // Cumulative ∫ds/shape on a fine grid (trapezoid), per plane.
  const n = Math.max(100, Math.ceil(L * STEPS_PER_M));
  const h = L / n;
  const tables: Float64Array[] = [0, 1].map((plane) => {
    const table = new Float64Array(n + 1);
    for (let i = 1; i <= n; i++) {
      const s0 = (i - 1) * h;
      table[i] = (table[i - 1] ?? 0) + (h / 2) * (1 / shape(plane, s0) + 1 / shape(plane, s0 + h));
    }
    return table;
  });
  const turns = spec.phaseTurns;
  // ψ(L) = (1/β₀)·∫ds/shape = 2π·turns  ⇒  β₀ = ∫ds/shape / (2π·turns).
  const beta0 = [0, 1].map((plane) =>
    (tables[plane]?.[n] ?? L) / (2 * Math.PI * (turns[plane] ?? 1))
  ) as [number, number];
  const integral = (plane: number, s: number) => {
    const table = tables[plane] as Float64Array;
    const x = Math.min(n, Math.max(0, s / h));
    const i = Math.min(n - 1, Math.floor(x));
    const f = x - i;
    return (table[i] ?? 0) + f * ((table[i + 1] ?? 0) - (table[i] ?? 0));
  };
  const [e0 = 1, e1 = e0] = spec.energyMeV ?? [];
  const etaM = spec.etaM ?? 0;
  const etaPeriods = spec.etaPeriods ?? 1;
  return {
    name,
    spec,
    lengthM: L,
    pathStart,
    phaseStart,
    advance: [2 * Math.PI * (turns[0] ?? 1), 2 * Math.PI * (turns[1] ?? 1)],
    at(s: number): LatticePoint {
      // α = −β'/2 of the smooth model.
      const slope = beta0[0] * a * k * Math.sin(k * s) / 2;
      return {
        section: name,
        s,
        path: pathStart + s,
        beta: [beta0[0] * shape(0, s), beta0[1] * shape(1, s)],
        alpha: [slope, -slope * beta0[1] / beta0[0]],
        phase: [
          phaseStart[0] + integral(0, s) / beta0[0],
          phaseStart[1] + integral(1, s) / beta0[1],
        ],
        eta: etaM * Math.sin((Math.PI * etaPeriods * s) / L) ** 2,
        etaPrime: etaM * (Math.PI * etaPeriods / L) * Math.sin((2 * Math.PI * etaPeriods * s) / L),
        energyMeV: e0 + ((e1 - e0) * s) / L,
      };
    },
  };
}
