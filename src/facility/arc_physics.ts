/**
 * Physics of the generated arcs (`scale.ts`), kept simple and local:
 *
 * - `arc-orbit`: each arc is its own closed-orbit ring. A BPM position reads
 *   its seeded offset plus Σ R·Δθ over the arc's correctors of its plane,
 *   R = √(βᵢβⱼ)/(2 sin πν)·cos(|ψᵢ − ψⱼ| − πν) (mm/mrad), with seeded β
 *   and an arc tune ν (every arc has the same lattice); correctors of other arcs and of the catalogue do not
 *   reach it, and arc correctors do not reach the catalogue's BPMs.
 * - `arc-energy`: `ARCnnn:ENERGY:MEAS` = E₀ · Σ Vᵢ cos(φᵢ − φcrest,ᵢ) / Σ V₀ᵢ cos(δᵢ)
 *   over the arc's RF stations, whose crest sits a seeded δᵢ = 3–5° below
 *   the initial phase: moving a station's phase or voltage moves the energy.
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import { uniform } from "./noise.ts";
import { arcTemplate, type Slot } from "./arc_template.ts";
import { ArcDevice } from "./scale.ts";

/** A setpoint's value in force (the physics supplies it). */
export type SetpointOf = (def: DeviceDef) => number;

const DEG = Math.PI / 180;
/** Arc tune per plane (H, V): phase advance over one arc, in turns. */
const ARC_TUNE = [3.23, 2.31];
const ARC_BETA_M = [3, 20];
const ARC_LENGTH_M = 160;

interface ArcOptics {
  /** Positions (in the arc template) of the corrector setpoints per plane. */
  correctors: [Slot[], Slot[]];
  bpmCount: number;
  corCount: number;
  stations: { phase: Slot; volt: Slot }[];
}

let optics: ArcOptics | undefined;

function arcOptics(): ArcOptics {
  if (optics) return optics;
  const slots = arcTemplate().slots;
  const cor = slots.filter((s) => s.role === "corrector" && s.suffix === "SETPT");
  const stations: ArcOptics["stations"] = [];
  for (const s of slots) {
    if (s.role !== "rfstation" || s.suffix !== "PHASE:SETPT") continue;
    const volt = slots.find((v) => v.prefixTail === s.prefixTail && v.suffix === "VOLT:SETPT");
    if (volt) stations.push({ phase: s, volt });
  }
  optics = {
    correctors: [cor.filter((s) => s.plane === "H"), cor.filter((s) => s.plane === "V")],
    bpmCount: slots.filter((s) => s.role === "bpm" && s.suffix === "X").length,
    corCount: cor.length / 2,
    stations,
  };
  return optics;
}

/** Response matrices (mm/mrad) per plane, [bpm − 1][corrector k], for one seed. */
let lattice: { seed: number; r: [Float64Array, Float64Array] } | undefined;

/** Every arc has the same seeded lattice (β and phase): one matrix per plane serves them all. */
function responses(seed: number): [Float64Array, Float64Array] {
  if (lattice?.seed === seed) return lattice.r;
  const o = arcOptics();
  const beta = (kind: number, index: number, plane: number) => {
    const [min = 3, max = 20] = ARC_BETA_M;
    return min + (max - min) * uniform(seed, kind, index, plane, 0xbe7a);
  };
  const r = [0, 1].map((p) => {
    const nu = ARC_TUNE[p] ?? 1;
    const cors = o.correctors[p] ?? [];
    const m = new Float64Array(o.bpmCount * cors.length);
    for (let b = 1; b <= o.bpmCount; b++) {
      const sb = (ARC_LENGTH_M / o.bpmCount) * (b - 0.5);
      cors.forEach((slot, k) => {
        const sc = (ARC_LENGTH_M / o.corCount) * (slot.index - 1) + 0.5;
        const dpsi = Math.abs((2 * Math.PI * nu * (sb - sc)) / ARC_LENGTH_M);
        m[(b - 1) * cors.length + k] = (Math.sqrt(beta(0, b, p) * beta(1, slot.index, p)) /
          (2 * Math.sin(Math.PI * nu))) * Math.cos(dpsi - Math.PI * nu);
      });
    }
    return m;
  }) as [Float64Array, Float64Array];
  lattice = { seed, r };
  return r;
}

/**
 * Closed orbit (mm, noise-free) at an arc BPM position device; `delta` gives
 * a corrector's kick change from its initial setting (mrad).
 */
export function arcOrbit(
  def: DeviceDef,
  seed: number,
  offsetMm: number,
  delta: SetpointOf,
): number {
  if (!(def instanceof ArcDevice) || def.plane === "") return 0;
  const p = def.plane === "V" ? 1 : 0;
  const cors = arcOptics().correctors[p];
  const row = (def.index - 1) * cors.length;
  const r = responses(seed)[p];
  const arc = def.arc;
  let x = offsetMm * (2 * uniform(seed, arc.number, def.slot.pos, 0x0ff5e7) - 1);
  for (let k = 0; k < cors.length; k++) {
    const slot = cors[k];
    const cor = slot && arc.devices[arc.start + slot.pos];
    if (cor === undefined) continue;
    const kick = delta(cor);
    if (kick !== 0) x += (r[row + k] ?? 0) * kick;
  }
  return x;
}

/**
 * Orbit response (mm/mrad) of an arc BPM position to an arc corrector setpoint;
 * 0 when they are not in the same arc and plane.
 */
export function arcResponse(bpm: DeviceDef, corrector: DeviceDef, seed: number): number {
  if (!(bpm instanceof ArcDevice) || !(corrector instanceof ArcDevice)) return 0;
  if (bpm.arc !== corrector.arc || bpm.plane !== corrector.plane) return 0;
  return arcOrbit(bpm, seed, 0, (c) => (c === corrector ? 1 : 0));
}

/** Beam energy (MeV, noise-free) of an arc from its RF stations' setpoints. */
export function arcEnergy(
  def: DeviceDef,
  seed: number,
  now: SetpointOf,
  initial: SetpointOf,
): number {
  if (!(def instanceof ArcDevice)) return 0;
  const arc = def.arc;
  let sum = 0;
  let norm = 0;
  for (const { phase, volt } of arcOptics().stations) {
    const p = arc.devices[arc.start + phase.pos];
    const v = arc.devices[arc.start + volt.pos];
    if (p === undefined || v === undefined) continue;
    const detune = 3 + 2 * uniform(seed, arc.number, phase.index, 0xc2e57);
    const crest = initial(p) - detune;
    sum += now(v) * Math.cos((now(p) - crest) * DEG);
    norm += initial(v) * Math.cos(detune * DEG);
  }
  return norm === 0 ? 0 : (def.spec.nom ?? 0) * sum / norm;
}
