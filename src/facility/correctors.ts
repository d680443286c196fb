/**
 * The correctors of the machine as the orbit reads them: each setpoint with
 * its place in the lattice (a generated arc's placed when first asked for),
 * and which of them may have moved at a time — the crews' routine
 * corrections and the live writes — split between the ring and the lines.
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import type { LatticePoint } from "./lattice.ts";
import type { Machine } from "./machine.ts";
import type { Setpoints } from "./setpoints.ts";

/** A corrector setpoint and its place in the lattice. */
export interface Corrector {
  readonly def: DeviceDef;
  readonly at: LatticePoint;
  readonly plane: number;
}

/** One kick: where, in which plane, how much (mrad). */
export interface Kick {
  readonly at: LatticePoint;
  readonly plane: number;
  readonly mrad: number;
}

/** The correctors of one {@link Machine}. */
export class CorrectorIndex {
  private readonly byName = new Map<string, Corrector>();
  private movedMemo = new WeakMap<
    Setpoints,
    { t: number; revision: number; ring: Corrector[]; line: Corrector[] }
  >();

  constructor(private readonly m: Machine) {
    for (const def of m.facility.catalogue) {
      if (def.role !== "corrector" || def.suffix !== "SETPT") continue;
      const at = m.optics.lattice.of(def);
      if (at === undefined) continue;
      this.byName.set(def.name, { def, at, plane: def.plane === "V" ? 1 : 0 });
    }
  }

  /** The corrector setpoint `name` with its place in the lattice, when it has one. */
  get(name: string): Corrector | undefined {
    return this.byName.get(name) ?? this.arcCorrector(name);
  }

  /**
   * Correctors whose kick may differ from the initial setting at `t`, those
   * of the ring and those of the lines (memoised per write history and time).
   */
  moved(t: number, sp: Setpoints): { ring: Corrector[]; line: Corrector[] } {
    const revision = sp.revision ?? 0;
    const memo = this.movedMemo.get(sp);
    if (memo !== undefined && memo.t === t && memo.revision === revision) return memo;
    const past = sp.pastMoved?.(t);
    const written = [...(sp.written?.() ?? [])];
    // Without live writes the moved correctors are those of the past's actions: one list per set.
    if (written.length === 0 && past !== undefined) {
      let lists = this.byPast.get(past);
      if (lists === undefined) {
        lists = this.split(past, []);
        this.byPast.set(past, lists);
      }
      const entry = { t, revision, ...lists };
      this.movedMemo.set(sp, entry);
      return entry;
    }
    const entry = { t, revision, ...this.split(past ?? [], written) };
    this.movedMemo.set(sp, entry);
    return entry;
  }

  private readonly settledMemo = new WeakMap<ReadonlyMap<string, number>, [Kick[], Kick[]]>();

  /** The kicks of a settled correction, per plane (one list per correction). */
  settled(kicks: ReadonlyMap<string, number>): [Kick[], Kick[]] {
    let out = this.settledMemo.get(kicks);
    if (out !== undefined) return out;
    out = [[], []];
    for (const [name, mrad] of kicks) {
      const c = this.byName.get(name);
      if (c !== undefined && mrad !== 0) {
        out[c.plane as 0 | 1].push({ at: c.at, plane: c.plane, mrad });
      }
    }
    this.settledMemo.set(kicks, out);
    return out;
  }

  private readonly byPast = new WeakMap<
    ReadonlySet<string>,
    { ring: Corrector[]; line: Corrector[] }
  >();

  private split(
    past: Iterable<string>,
    written: Iterable<string>,
  ): { ring: Corrector[]; line: Corrector[] } {
    const ring: Corrector[] = [];
    const line: Corrector[] = [];
    const seen = new Set<string>();
    const add = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      const c = this.byName.get(name) ?? this.arcCorrector(name);
      if (c === undefined) return;
      (c.at.section === this.m.optics.ring?.name ? ring : line).push(c);
    };
    for (const name of past) add(name);
    for (const name of written) add(name);
    return { ring, line };
  }

  /** A generated arc's corrector setpoint, placed in the ring (undefined for anything else). */
  private arcCorrector(name: string): Corrector | undefined {
    const def = this.m.facility.byName.get(name);
    if (def === undefined || def.role !== "corrector" || def.suffix !== "SETPT") return undefined;
    const at = this.m.optics.lattice.of(def);
    if (at === undefined) return undefined;
    const c = { def, at, plane: def.plane === "V" ? 1 : 0 };
    this.byName.set(name, c);
    return c;
  }
}
