/**
 * Linear optics of the simulated machine: a seeded orbit-response matrix per
 * beamline section and the tune response to the ring quadrupole families.
 *
 * Transfer lines use the open-line response R = √(βᵢβⱼ)·sin(ψᵢ − ψⱼ) for
 * BPMs downstream of a corrector and zero upstream; the ring uses the
 * closed-orbit response √(βᵢβⱼ)/(2 sin πν)·cos(|ψᵢ − ψⱼ| − πν). With β in
 * metres, R is in m/rad, which is mm/mrad — the units of BPMs and correctors.
 *
 * @module
 */

import type { DeviceDef, Facility, OpticsSpec } from "./facility.ts";
import { gauss, hashString, uniform } from "./noise.ts";

/** One corrector's contribution to one BPM reading. */
export interface Term {
  /** The corrector's setpoint device. */
  readonly corrector: DeviceDef;
  /** Response in mm/mrad. */
  readonly r: number;
}

/** One quadrupole family's contribution to a tune. */
export interface TuneTerm {
  readonly magnet: DeviceDef;
  /** Tune change per relative change of the family current. */
  readonly k: number;
}

/** Everything the physics needs to turn corrector and magnet settings into orbit and tune. */
export interface Optics {
  /** Orbit terms per BPM position device (X or Y). */
  readonly terms: ReadonlyMap<string, readonly Term[]>;
  /** Orbit per BPM with the initial corrector settings (offsets and residual orbit), mm. */
  readonly offset: ReadonlyMap<string, number>;
  /** Quadrupole terms per tune device. */
  readonly tune: ReadonlyMap<string, readonly TuneTerm[]>;
  /** The BPM (X, Y) nearest each beam-loss monitor. */
  readonly blmBpms: ReadonlyMap<string, readonly [DeviceDef, DeviceDef]>;
}

const RING_TUNE_DEVICES = ["RING:TUNE:X", "RING:TUNE:Y"];

/** Builds the optics for a facility and seed. */
export function buildOptics(facility: Facility, seed: number): Optics {
  const terms = new Map<string, Term[]>();
  const offset = new Map<string, number>();
  const blmBpms = new Map<string, readonly [DeviceDef, DeviceDef]>();
  for (const [section, spec] of Object.entries(facility.spec.optics)) {
    const inSection = facility.devices.filter((d) => d.section === section);
    const bpmX = inSection.filter((d) => d.role === "bpm" && d.suffix === "X");
    const bpmY = inSection.filter((d) => d.role === "bpm" && d.suffix === "Y");
    const correctors = inSection.filter((d) => d.role === "corrector" && d.suffix === "SETPT");
    for (const [plane, bpms] of [["H", bpmX], ["V", bpmY]] as const) {
      const cors = correctors.filter((d) => d.plane === plane);
      const p = plane === "H" ? 0 : 1;
      for (const bpm of bpms) {
        const list: Term[] = [];
        for (const cor of cors) {
          const r = response(spec, seed, p, bpm, bpms.length, cor, cors.length);
          if (r !== 0) list.push({ corrector: cor, r });
        }
        terms.set(bpm.name, list);
        offset.set(bpm.name, facility.spec.orbitOffsetMm * gauss(seed, bpm.key, 0x0ff5e7));
      }
    }
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
  return { terms, offset, tune: tuneTerms(facility), blmBpms };
}

function tuneTerms(facility: Facility): Map<string, TuneTerm[]> {
  const out = new Map<string, TuneTerm[]>();
  const ring = facility.spec.optics["RING"];
  RING_TUNE_DEVICES.forEach((name, plane) => {
    const list: TuneTerm[] = [];
    (ring?.tuneFamilies ?? []).forEach((prefix, i) => {
      const magnet = facility.byName.get(`${prefix}:CURRENT`);
      const k = ring?.tuneSensitivity?.[plane]?.[i];
      if (magnet !== undefined && k !== undefined) list.push({ magnet, k });
    });
    out.set(name, list);
  });
  return out;
}

/** Position along the section (m): BPMs centred in their slots, correctors early in theirs. */
function position(spec: OpticsSpec, def: DeviceDef, count: number, corrector: boolean): number {
  const slot = spec.lengthM / count;
  return corrector ? slot * (def.index - 1) + 0.5 : slot * (def.index - 0.5);
}

function beta(spec: OpticsSpec, seed: number, def: DeviceDef, plane: number): number {
  const [min = 5, max = 20] = spec.betaM;
  return min + (max - min) * uniform(seed, hashString(def.prefix), plane, 0xbe7a);
}

function response(
  spec: OpticsSpec,
  seed: number,
  plane: number,
  bpm: DeviceDef,
  bpmCount: number,
  cor: DeviceDef,
  corCount: number,
): number {
  const nu = spec.phaseTurns[plane] ?? 1;
  const sb = position(spec, bpm, bpmCount, false);
  const sc = position(spec, cor, corCount, true);
  const amplitude = spec.scale *
    Math.sqrt(beta(spec, seed, bpm, plane) * beta(spec, seed, cor, plane));
  const psi = (s: number) => (2 * Math.PI * nu * s) / spec.lengthM;
  if (spec.kind === "ring") {
    const dpsi = Math.abs(psi(sb) - psi(sc));
    return (amplitude / (2 * Math.sin(Math.PI * nu))) * Math.cos(dpsi - Math.PI * nu);
  }
  if (sb <= sc) return 0; // causality: a kick cannot move the beam upstream
  return amplitude * Math.sin(psi(sb) - psi(sc));
}
