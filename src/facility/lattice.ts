/**
 * One lattice along s: every beamline section's β functions, betatron phase,
 * dispersion and beam energy, and the position of every device in it.
 *
 * β(s) = β₀·(1 ± a·cos(2π·p·s/L)) per plane (horizontal +, vertical −), with
 * β₀ chosen so that the phase advance ψ(s) = ∫ds/β over the section equals
 * the section's `phaseTurns`: in the ring, the tunes. A section may continue
 * another (`follows`): its s and phase then carry on from the end of that one,
 * so a kick upstream reaches the BPMs of both. Positions come from the device
 * ids (BPMs and BLMs centred in equal slots, correctors 0.5 m into theirs) or
 * from the section's `positions` table, so new sections and cells join by
 * adding data.
 *
 * @module
 */

import type { DeviceDef, Facility, OpticsSpec } from "./facility.ts";

/** Optics at one point of the lattice. */
export interface LatticePoint {
  readonly section: string;
  /** Position along the section, m. */
  readonly s: number;
  /** Position along the beam path (continued sections add the lengths before them), m. */
  readonly path: number;
  /** β function [horizontal, vertical], m. */
  readonly beta: readonly [number, number];
  /** Betatron phase along the beam path [horizontal, vertical], rad. */
  readonly phase: readonly [number, number];
  /** Horizontal dispersion, m. */
  readonly eta: number;
  /** Design beam energy, MeV. */
  readonly energyMeV: number;
}

/** One section, with the tables its optics are evaluated from. */
export interface LatticeSection {
  readonly name: string;
  readonly spec: OpticsSpec;
  /** Path length before this section (continued sections), m. */
  readonly pathStart: number;
  /** Phase before this section [H, V], rad. */
  readonly phaseStart: readonly [number, number];
  /** β₀ per plane, m. */
  readonly beta0: readonly [number, number];
  /** Total phase advance over the section [H, V], rad. */
  readonly advance: readonly [number, number];
  /** The optics at position `s` (m) of the section. */
  at(s: number): LatticePoint;
}

/** The whole lattice: sections and the point of every positioned device prefix. */
export interface Lattice {
  readonly sections: ReadonlyMap<string, LatticeSection>;
  /** Optics at each device prefix placed in a section (`RING:BPM:07`, `LINAC:COR:H03`). */
  readonly points: ReadonlyMap<string, LatticePoint>;
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
      pathStart = before.pathStart + before.spec.lengthM;
      phaseStart = [
        before.phaseStart[0] + before.advance[0],
        before.phaseStart[1] + before.advance[1],
      ];
    }
    const section = makeSection(name, spec, pathStart, phaseStart);
    sections.set(name, section);
    return section;
  };
  for (const name of Object.keys(specs)) build(name, new Set());

  const points = new Map<string, LatticePoint>();
  const groups = new Map<string, DeviceDef[]>();
  for (const def of facility.devices) {
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
      const explicit = section.spec.positions?.[def.prefix];
      const s = explicit ?? slotPosition(section.spec.lengthM, def, list.length);
      points.set(def.prefix, section.at(s));
    }
  }
  return { sections, points, of: (def) => points.get(def.prefix) };
}

/** Devices of one family share slots: the family is the prefix without its id. */
function familyKey(def: DeviceDef): string {
  return `${def.role}|${def.prefix.replace(/[A-Z]?\d+$/, "")}|${def.plane}`;
}

/** BPMs and other devices centred in equal slots, correctors early in theirs. */
function slotPosition(length: number, def: DeviceDef, count: number): number {
  const slot = length / count;
  const index = def.index || 1;
  return def.role === "corrector" ? slot * (index - 1) + 0.5 : slot * (index - 0.5);
}

function makeSection(
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
    pathStart,
    phaseStart,
    beta0,
    advance: [2 * Math.PI * (turns[0] ?? 1), 2 * Math.PI * (turns[1] ?? 1)],
    at(s: number): LatticePoint {
      return {
        section: name,
        s,
        path: pathStart + s,
        beta: [beta0[0] * shape(0, s), beta0[1] * shape(1, s)],
        phase: [
          phaseStart[0] + integral(0, s) / beta0[0],
          phaseStart[1] + integral(1, s) / beta0[1],
        ],
        eta: etaM * Math.sin((Math.PI * etaPeriods * s) / L) ** 2,
        energyMeV: e0 + ((e1 - e0) * s) / L,
      };
    },
  };
}
