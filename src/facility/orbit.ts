/**
 * Where the beam is: the ring's closed orbit and the lines' trajectories,
 * from every kick the machine has at a time.
 *
 * The ring's kicks are its dipole errors (a static part and a slow wander of
 * a few µrad: ground motion and temperature), every corrector whose kick
 * differs from its initial setting (live writes and the crews' routine
 * corrections), the insertion devices' field-integral errors, and the kicks
 * an off-centre orbit gets in a quadrupole family whose strength changed
 * (ΔK·L·x). The closed orbit at any point is Σ R·θ over those kicks
 * (`optics.ts`) plus η·δ from the RF frequency; its angle likewise. A BPM
 * adds its electrical offset and the girders' thermal motion.
 *
 * A line's trajectory is its launch error (a betatron oscillation
 * √β·(a cos ψ + b sin ψ) from where the beam enters the path: the gun for
 * the linac and LTB line, the booster's extraction for BTS; seeded, with a
 * slow wander), the kicks of correctors upstream and of linac quadrupoles
 * whose strength changed, and η·δ from its beam's energy error.
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import type { LatticePoint, LatticeSection } from "./lattice.ts";
import type { Machine } from "./machine.ts";
import { type Corrector, CorrectorIndex, type Kick } from "./correctors.ts";

export type { Corrector, Kick } from "./correctors.ts";
import { gauss, hashString, smooth } from "./noise.ts";
import {
  lineResponse,
  pathStart,
  ringAngleResponse,
  type RingConstants,
  ringResponse,
} from "./optics.ts";
import { undulatorFieldT } from "./ring.ts";
import type { Setpoints } from "./setpoints.ts";
import { num } from "./signals.ts";

/** The ring's kicks at one time, per plane, and the tunes they act at. */
interface RingState {
  readonly kicks: readonly [readonly Kick[], readonly Kick[]];
  readonly nu: readonly [number, number];
  /** Relative energy offset from the RF frequency (moves the orbit by η·δ). */
  readonly delta: number;
}

/** Wander of the dipole errors: knots every four hours. */
const WANDER_MS = 4 * 3_600_000;
/** Launch errors of the lines: rms, and the amplitude of their wander, mm/√m. */
const LAUNCH_RMS = 0.03;
const LAUNCH_WANDER = 0.06;

/** The orbit of one {@link Machine}. */
export class OrbitModel {
  private readonly ring: LatticeSection | undefined;
  private readonly constants: RingConstants | undefined;
  private readonly correctors: CorrectorIndex;
  private readonly gaps: readonly { def: DeviceDef; at: LatticePoint }[];
  private readonly linacQuads: readonly { def: DeviceDef; at: LatticePoint; kl: number }[];
  private readonly tunnel: readonly DeviceDef[];
  private readonly ringBpmCount: number;
  private memo = new WeakMap<Setpoints, { t: number; revision: number; state: RingState }>();

  constructor(private readonly m: Machine) {
    const lattice = m.optics.lattice;
    this.ring = m.optics.ring;
    const cell = this.ring?.ring;
    this.constants = cell === undefined ? undefined : {
      alphaC: cell.alphaC,
      circumferenceM: cell.circumferenceM,
      tunes: cell.tunes,
    };
    this.correctors = new CorrectorIndex(m);
    this.gaps = m.facility.catalogue.flatMap((def) => {
      const at = def.role === "insertion" && def.suffix === "GAP:SETPT"
        ? lattice.of(def)
        : undefined;
      return at === undefined ? [] : [{ def, at }];
    });
    this.linacQuads = m.facility.catalogue.flatMap((def) => {
      const at = def.role === "quad" && def.suffix === "CURRENT" ? lattice.of(def) : undefined;
      if (at === undefined || at.section !== "LINAC") return [];
      // Alternating focusing, 1/f = 0.3 /m at the initial current.
      return [{ def, at, kl: def.index % 2 === 1 ? 0.3 : -0.3 }];
    });
    this.tunnel = m.facility.catalogue.filter((d) => d.prefix.startsWith("RING:TUNNEL:TEMP:"));
    this.ringBpmCount =
      m.facility.catalogue.filter((d) =>
        d.role === "bpm" && d.section === this.ring?.name && d.suffix === "X"
      ).length;
  }

  /** Ring constants of the dispersion term (undefined without a ring). */
  get ringConstants(): RingConstants | undefined {
    return this.constants;
  }

  /**
   * What a BPM position device reads, mm, without noise: its electrical
   * offset plus the beam's position there; `slow` false leaves out the
   * µm-scale thermal drift and the dispersion orbit.
   */
  bpm(def: DeviceDef, t: number, sp: Setpoints, slow = true): number {
    const at = this.m.optics.lattice.of(def);
    // A generated arc's BPMs: their electrical offsets, seeded like the catalogue's.
    const offset = this.m.optics.offset.get(def.name) ??
      this.m.facility.spec.ring.bpmOffsetMm * gauss(this.m.seed, def.key, 0x0ff5e7);
    if (at === undefined) return offset;
    const plane = def.plane === "V" ? 1 : 0;
    let x = offset + this.position(at, plane, t, sp, slow);
    if (slow && at.section === this.ring?.name) x += this.thermal(def, t, sp);
    return x;
  }

  /** The beam's position (mm) at a lattice point, in `plane`. */
  position(at: LatticePoint, plane: number, t: number, sp: Setpoints, dispersion = true): number {
    if (this.ring !== undefined && at.section === this.ring.name) {
      const state = this.state(t, sp);
      let x = this.sum(at, plane, state, ringResponse);
      if (plane === 0 && dispersion) x += 1000 * at.eta * state.delta;
      return x;
    }
    return this.trajectory(at, plane, t, sp, dispersion);
  }

  /** The closed orbit's angle (mrad) at a ring point, in `plane`. */
  angle(at: LatticePoint, plane: number, t: number, sp: Setpoints): number {
    const state = this.state(t, sp);
    let x = this.sum(at, plane, state, ringAngleResponse);
    if (plane === 0) x += 1000 * at.etaPrime * state.delta;
    return x;
  }

  /**
   * The golden orbit (mm) at a ring point: the static dipole errors alone at
   * the design tunes, where the crews correct the orbit back to and the photon
   * BPMs were referenced.
   */
  golden(at: LatticePoint, plane: number): number {
    return this.goldenSum(at, plane, ringResponse);
  }

  /** The golden orbit's angle (mrad) at a ring point. */
  goldenAngle(at: LatticePoint, plane: number): number {
    return this.goldenSum(at, plane, ringAngleResponse);
  }

  private goldenSum(
    at: LatticePoint,
    plane: number,
    response: (i: LatticePoint, j: LatticePoint, p: number, nu: number, r: RingConstants) => number,
  ): number {
    const c = this.constants;
    if (c === undefined) return 0;
    let x = 0;
    for (const e of this.m.optics.errors[plane] ?? []) {
      x += response(at, e.at, plane, c.tunes[plane] ?? 0, c) * e.kick;
    }
    return x;
  }

  /** The slow wander (mrad) of dipole error `i` of `plane` at `t`. */
  wander(plane: number, i: number, t: number): number {
    const e = this.m.optics.errors[plane]?.[i];
    return e === undefined
      ? 0
      : this.m.facility.spec.ring.driftKickMrad * smooth(this.m.seed, e.key, t, WANDER_MS);
  }

  /** Ring orbit response (mm/mrad) at `bpm` to `corrector`, at the live tune. */
  ringResponse(
    bpm: LatticePoint,
    corrector: LatticePoint,
    plane: number,
    t: number,
    sp: Setpoints,
  ) {
    if (this.constants === undefined) return 0;
    return ringResponse(bpm, corrector, plane, this.state(t, sp).nu[plane] ?? 0, this.constants);
  }

  /** The corrector setpoint `name` with its place in the lattice, when it has one. */
  corrector(name: string): Corrector | undefined {
    return this.correctors.get(name);
  }

  private sum(
    at: LatticePoint,
    plane: number,
    state: RingState,
    response: (i: LatticePoint, j: LatticePoint, p: number, nu: number, r: RingConstants) => number,
  ): number {
    const constants = this.constants;
    if (constants === undefined) return 0;
    const nu = state.nu[plane] ?? 0;
    let x = 0;
    for (const k of state.kicks[plane] ?? []) {
      x += response(at, k.at, plane, nu, constants) * k.mrad;
    }
    return x;
  }

  /** The ring's kicks at `t` (memoised per write history and time: a read asks per BPM). */
  private state(t: number, sp: Setpoints): RingState {
    const revision = sp.revision ?? 0;
    const memo = this.memo.get(sp);
    if (memo !== undefined && memo.t === t && memo.revision === revision) return memo.state;
    const state = this.computeState(t, sp);
    this.memo.set(sp, { t, revision, state });
    return state;
  }

  private computeState(t: number, sp: Setpoints): RingState {
    const m = this.m;
    const ring = m.facility.spec.ring;
    const kicks: [Kick[], Kick[]] = [[], []];
    const nu = m.tunes(t, sp);
    for (const plane of [0, 1] as const) {
      for (const e of m.optics.errors[plane]) {
        const wander = ring.driftKickMrad * smooth(m.seed, e.key, t, WANDER_MS);
        kicks[plane].push({ at: e.at, plane, mrad: e.kick + wander });
      }
    }
    const settled = [...(sp.written?.() ?? [])].length === 0 ? sp.pastRingKicks?.(t) : undefined;
    if (settled !== undefined) {
      const [h, v] = this.correctors.settled(settled);
      kicks[0].push(...h);
      kicks[1].push(...v);
    } else {
      for (const c of this.correctors.moved(t, sp).ring) {
        const kick = m.delta(c.def, t, sp);
        if (kick !== 0) kicks[c.plane]?.push({ at: c.at, plane: c.plane, mrad: kick });
      }
    }
    if ((sp.revision ?? 0) > 0) {
      for (const { def, at } of this.gaps) {
        const g0 = num(m.initial.get(def.name));
        const g = num(m.actual(def, t, sp));
        if (g === g0) continue;
        const b2 = (gap: number) => undulatorFieldT(gap, ring.idPeriodMm) ** 2;
        for (const plane of [0, 1] as const) {
          const kick = ring.idKickMradPerT2 * (b2(g) - b2(g0)) * gauss(m.seed, def.key, plane);
          kicks[plane].push({ at, plane, mrad: kick });
        }
      }
    }
    const delta = m.rfDelta(t, sp);
    const state: RingState = { kicks, nu, delta };
    // An off-centre orbit in a quadrupole whose strength changed is kicked by ΔK·L·x (first order).
    const feed: [Kick[], Kick[]] = [[], []];
    for (const q of (sp.revision ?? 0) > 0 ? m.optics.quads : []) {
      const i0 = num(m.initial.get(q.magnet.name)) || 1;
      const dk = (q.strength * m.delta(q.magnet, t, sp)) / i0;
      if (dk === 0) continue;
      for (const at of q.points) {
        for (const plane of [0, 1] as const) {
          const x = this.sum(at, plane, state, ringResponse) +
            (plane === 0 ? 1000 * at.eta * delta : 0);
          feed[plane].push({ at, plane, mrad: (plane === 0 ? 1 : -1) * dk * q.lengthM * x });
        }
      }
    }
    for (const name of sp.written?.() ?? []) {
      const def = m.facility.byName.get(name);
      const magnet = def === undefined ? undefined : m.arcQuad(def);
      if (def === undefined || magnet === undefined) continue;
      const dk = magnet.dk(m.delta(def, t, sp));
      if (dk === 0) continue;
      for (const plane of [0, 1] as const) {
        const x = this.sum(magnet.at, plane, state, ringResponse) +
          (plane === 0 ? 1000 * magnet.at.eta * delta : 0);
        feed[plane].push({
          at: magnet.at,
          plane,
          mrad: (plane === 0 ? 1 : -1) * dk * magnet.lengthM * x,
        });
      }
    }
    return { kicks: [[...kicks[0], ...feed[0]], [...kicks[1], ...feed[1]]], nu, delta };
  }

  /** A line's trajectory at `at`: launch error, kicks upstream, η·δ. */
  private trajectory(
    at: LatticePoint,
    plane: number,
    t: number,
    sp: Setpoints,
    dispersion: boolean,
  ): number {
    const m = this.m;
    const lattice = m.optics.lattice;
    const section = lattice.sections.get(at.section);
    if (section === undefined) return 0;
    let x = this.launch(section, at, plane, t);
    for (const c of this.correctors.moved(t, sp).line) {
      if (c.plane !== plane) continue;
      const r = lineResponse(lattice, at, c.at, plane);
      if (r !== 0) x += r * m.delta(c.def, t, sp);
    }
    if ((sp.revision ?? 0) > 0) {
      for (const q of this.linacQuads) {
        const r = lineResponse(lattice, at, q.at, plane);
        if (r === 0) continue;
        const i0 = num(m.initial.get(q.def.name)) || 1;
        const dkl = (q.kl * m.delta(q.def, t, sp)) / i0;
        if (dkl === 0) continue;
        const xq = this.trajectory(q.at, plane, t, sp, dispersion);
        x += r * (plane === 0 ? 1 : -1) * dkl * xq;
      }
    }
    if (dispersion && plane === 0 && at.eta !== 0) {
      x += 1000 * at.eta * m.energyError(section.spec.energySource, t, sp);
    }
    return x;
  }

  /**
   * The launch error of the beam path through `section` at `at`: a betatron
   * oscillation √β·(a cos ψ + b sin ψ), with a seeded part and a slow wander.
   */
  launch(section: LatticeSection, at: LatticePoint, plane: number, t: number): number {
    const start = pathStart(this.m.optics.lattice, section);
    const key = hashString(`${start.name}:launch:${plane}`);
    const seed = this.m.seed;
    const a = LAUNCH_RMS * gauss(seed, key, 1) +
      LAUNCH_WANDER * smooth(seed, key + 1, t, WANDER_MS);
    const b = LAUNCH_RMS * gauss(seed, key, 2) +
      LAUNCH_WANDER * smooth(seed, key + 2, t, WANDER_MS);
    const psi = (at.phase[plane] ?? 0) - (start.phaseStart[plane] ?? 0);
    return Math.sqrt(at.beta[plane] ?? 0) * (a * Math.cos(psi) + b * Math.sin(psi));
  }

  /** Girders move with the tunnel temperature: a few µm per kelvin at each ring BPM. */
  private thermal(def: DeviceDef, t: number, sp: Setpoints): number {
    if (this.tunnel.length === 0 || this.ringBpmCount === 0 || def.index === 0) return 0;
    const i = Math.min(
      this.tunnel.length - 1,
      Math.floor(((def.index - 0.5) * this.tunnel.length) / this.ringBpmCount),
    );
    const sensor = this.tunnel[i] as DeviceDef;
    const s = sensor.spec;
    const base = (s.nom ?? 0) * (1 + (s.spread ?? 0) * gauss(this.m.seed, sensor.key, 0x5ca7));
    const dT = this.m.level(sensor, t, sp) - base;
    return this.m.facility.spec.ring.thermalOrbitMmPerK * gauss(this.m.seed, def.key, 0x7e41) * dT;
  }
}
