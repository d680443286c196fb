/**
 * What the crews' routine corrections set, worked out from the machine as
 * it was at that moment, the way the control room's applications do:
 *
 * - an orbit correction measures the ring's orbit at its BPMs, and the photon
 *   beams at the front ends' photon BPMs (x + L·x' at each source point),
 *   against the reference (golden) orbit and sets every ring corrector of
 *   each plane to θ = −(RᵀR + λI)⁻¹Rᵀ·Δx, the regularised least-squares
 *   inverse of the response R at the design tunes (dispersion term included);
 * - an injection tuning measures the trajectory at the injection BPMs and
 *   sets the last steering corrector of each plane in the linac and in the
 *   BTS line to θ = −ΣRᵢxᵢ/ΣRᵢ², the least-squares kick over the injection
 *   BPMs it reaches.
 *
 * Each correction replaces the settings of the one before, so its kicks
 * follow from the machine at its own time alone and the history can be
 * replayed from any point. The orbit and trajectory it removes are the slow
 * wander of the ring's dipole errors and of the lines' launch (`orbit.ts`).
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import type { LatticePoint } from "./lattice.ts";
import { lineResponse, ringAngleResponse, ringResponse } from "./optics.ts";
import type { Physics } from "./physics.ts";
import type { Setpoints } from "./setpoints.ts";
import { fixedSetpoints } from "./state.ts";

/** The correctors an injection tuning steers with. */
export const INJECTION_CORRECTORS = [
  "LINAC:COR:H10:SETPT",
  "LINAC:COR:V10:SETPT",
  "BTS:COR:H06:SETPT",
  "BTS:COR:V06:SETPT",
];
/** Regularisation of the orbit correction, relative to the mean eigenvalue of RᵀR. */
const TIKHONOV = 1e-2;
const KEPT = 512;

interface Plane {
  readonly bpms: readonly { def: DeviceDef; at: LatticePoint }[];
  /** Photon-beam rows: a source point and its lever arm (m). */
  readonly sources: readonly { at: LatticePoint; armM: number }[];
  readonly correctors: readonly DeviceDef[];
  /** The correction matrix, correctors × BPMs, row-major. */
  readonly inverse: Float64Array;
}

/** The crews' corrections of one machine. */
export class Corrections {
  private planes: [Plane, Plane] | undefined;
  private readonly fixed: Setpoints;
  private readonly orbitKicks = new Map<number, ReadonlyMap<string, number>>();
  private readonly injectionKicks = new Map<number, ReadonlyMap<string, number>>();

  constructor(private readonly physics: Physics) {
    this.fixed = fixedSetpoints(physics.initial);
  }

  #orbitCorrectors: readonly string[] | undefined;

  /** The ring correctors an orbit correction sets. */
  get orbitCorrectors(): readonly string[] {
    if (this.#orbitCorrectors !== undefined) return this.#orbitCorrectors;
    const [h, v] = this.ringPlanes();
    return this.#orbitCorrectors = [...h.correctors, ...v.correctors].map((d) => d.name);
  }

  /** The ring BPM position devices an orbit correction reads. */
  get orbitBpms(): readonly DeviceDef[] {
    const [h, v] = this.ringPlanes();
    return [...h.bpms, ...v.bpms].map((b) => b.def);
  }

  /**
   * The kicks (mrad, from each corrector's initial setting) of an orbit
   * correction made at `t`: every ring corrector, rounded to its precision.
   */
  orbit(t: number): ReadonlyMap<string, number> {
    const known = this.orbitKicks.get(t);
    if (known !== undefined) return known;
    const out = new Map<string, number>();
    this.ringPlanes().forEach((plane, p) => {
      // The orbit's distance from the reference: what the wander of the dipole errors made of it.
      const dx = [
        ...plane.bpms.map(({ at }) => this.wanderOrbit(at, p, t, ringResponse)),
        ...plane.sources.map(({ at, armM }) =>
          this.wanderOrbit(at, p, t, ringResponse) +
          armM * this.wanderOrbit(at, p, t, ringAngleResponse)
        ),
      ];
      const n = dx.length;
      plane.correctors.forEach((c, k) => {
        let theta = 0;
        for (let i = 0; i < n; i++) theta -= (plane.inverse[k * n + i] ?? 0) * (dx[i] ?? 0);
        const digits = c.info.precision ?? 4;
        out.set(c.name, Number(theta.toFixed(digits)));
      });
    });
    remember(this.orbitKicks, t, out);
    return out;
  }

  /** The kicks (mrad, from the initial settings) of an injection tuning made at `t`. */
  injection(t: number): ReadonlyMap<string, number> {
    const known = this.injectionKicks.get(t);
    if (known !== undefined) return known;
    const physics = this.physics;
    const lattice = physics.optics.lattice;
    const out = new Map<string, number>();
    for (const name of INJECTION_CORRECTORS) {
      const cor = physics.orbit.corrector(name);
      if (cor === undefined) continue;
      let num = 0;
      let den = 0;
      for (const bpmName of physics.facility.spec.injector.injectionBpms) {
        const bpm = physics.facility.byName.get(bpmName);
        const at = bpm ? lattice.of(bpm) : undefined;
        if (bpm === undefined || at === undefined || (bpm.plane === "V" ? 1 : 0) !== cor.plane) {
          continue;
        }
        const r = lineResponse(lattice, at, cor.at, cor.plane);
        if (r === 0) continue;
        // The trajectory the crew sees without any of its earlier steering.
        const x = physics.orbit.bpm(bpm, t, this.fixed);
        num += r * x;
        den += r * r;
      }
      if (den > 0) out.set(name, Number((-num / den).toFixed(cor.def.info.precision ?? 3)));
    }
    remember(this.injectionKicks, t, out);
    return out;
  }

  /** Σ R·w over the dipole errors' wander at `t`, at the design tunes: the orbit away from the reference. */
  private wanderOrbit(
    at: LatticePoint,
    plane: number,
    t: number,
    response: typeof ringResponse,
  ): number {
    const physics = this.physics;
    const constants = physics.orbit.ringConstants;
    if (constants === undefined) return 0;
    const nu = constants.tunes[plane] ?? 0;
    let x = 0;
    (physics.optics.errors[plane] ?? []).forEach((e, i) => {
      x += response(at, e.at, plane, nu, constants) * physics.orbit.wander(plane, i, t);
    });
    return x;
  }

  private ringPlanes(): [Plane, Plane] {
    if (this.planes !== undefined) return this.planes;
    const physics = this.physics;
    const ring = physics.optics.ring;
    const constants = physics.orbit.ringConstants;
    const plane = (p: number): Plane => {
      const bpms = physics.facility.catalogue.flatMap((def) => {
        if (def.role !== "bpm" || def.section !== ring?.name) return [];
        if (def.suffix !== (p === 0 ? "X" : "Y")) return [];
        const at = physics.optics.lattice.of(def);
        return at === undefined ? [] : [{ def, at }];
      });
      const correctors = physics.facility.catalogue.filter((def) =>
        def.role === "corrector" && def.suffix === "SETPT" && def.section === ring?.name &&
        (def.plane === "V" ? 1 : 0) === p && physics.optics.lattice.of(def) !== undefined
      );
      const sources = [...physics.optics.lattice.sources.values()];
      const n = bpms.length + sources.length;
      const m = correctors.length;
      const r = new Float64Array(n * m);
      if (constants !== undefined) {
        const nu = constants.tunes[p] ?? 0;
        correctors.forEach((c, k) => {
          const at = physics.optics.lattice.of(c) as LatticePoint;
          bpms.forEach((b, i) => (r[i * m + k] = ringResponse(b.at, at, p, nu, constants)));
          sources.forEach((src, i) => {
            r[(bpms.length + i) * m + k] = ringResponse(src.at, at, p, nu, constants) +
              src.armM * ringAngleResponse(src.at, at, p, nu, constants);
          });
        });
      }
      return { bpms, sources, correctors, inverse: regularisedInverse(r, n, m) };
    };
    const planes: [Plane, Plane] = [plane(0), plane(1)];
    this.planes = planes;
    return planes;
  }
}

/** (RᵀR + λI)⁻¹Rᵀ (m × n) of an n × m matrix R, λ a small fraction of RᵀR's mean diagonal. */
function regularisedInverse(r: Float64Array, n: number, m: number): Float64Array {
  const a = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += (r[k * m + i] ?? 0) * (r[k * m + j] ?? 0);
      a[i * m + j] = s;
    }
  }
  let trace = 0;
  for (let i = 0; i < m; i++) trace += a[i * m + i] ?? 0;
  const lambda = (TIKHONOV * trace) / Math.max(1, m);
  for (let i = 0; i < m; i++) a[i * m + i] = (a[i * m + i] ?? 0) + lambda;
  // Solve A·X = Rᵀ by Gauss–Jordan elimination (A is symmetric positive definite).
  const b = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let k = 0; k < n; k++) b[i * n + k] = r[k * m + i] ?? 0;
  for (let c = 0; c < m; c++) {
    const pivot = a[c * m + c] ?? 1;
    for (let j = 0; j < m; j++) a[c * m + j] = (a[c * m + j] ?? 0) / pivot;
    for (let k = 0; k < n; k++) b[c * n + k] = (b[c * n + k] ?? 0) / pivot;
    for (let i = 0; i < m; i++) {
      if (i === c) continue;
      const f = a[i * m + c] ?? 0;
      if (f === 0) continue;
      for (let j = 0; j < m; j++) a[i * m + j] = (a[i * m + j] ?? 0) - f * (a[c * m + j] ?? 0);
      for (let k = 0; k < n; k++) b[i * n + k] = (b[i * n + k] ?? 0) - f * (b[c * n + k] ?? 0);
    }
  }
  return b;
}

function remember<V>(map: Map<number, V>, key: number, value: V): void {
  if (map.size >= KEPT) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
}
