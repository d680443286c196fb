/**
 * The ring's vacuum as the stored beam feels it: the average pressure of the
 * ring's gauges over their reference, with the incidents' pressure bursts.
 *
 * @module
 */
import type { DeviceDef } from "./facility.ts";
import { IncidentBook } from "./incidents.ts";
import { gauss } from "./noise.ts";
import type { Machine } from "./machine.ts";
import type { Setpoints } from "./setpoints.ts";

const PRESSURE_GRID_MS = 600_000;
/** Grid points and shifts remembered before the memo starts over. */
const MEMO_SIZE = 4096;

/** The ring gauges of one {@link Machine}. */
export class RingVacuum {
  /** The ring's ion gauges. */
  readonly gauges: readonly DeviceDef[];
  /** Their average pressure with the initial settings, mbar: the reference of the ratio. */
  readonly reference: number;
  private readonly pressures = new Map<number, number>();
  private readonly bursts = new Map<number, readonly DeviceDef[]>();

  constructor(private readonly physics: Machine) {
    this.gauges = physics.facility.catalogue.filter((d) => /^RING:VAC:IG:\d+:PRES$/.test(d.name));
    this.reference = mean(this.gauges.map((d) => {
      const s = d.spec;
      return (s.nom ?? 1) * 10 ** ((s.spread ?? 0) * gauss(physics.seed, d.key, 0x5ca7));
    }));
  }

  /**
   * Average ring pressure over its reference. The gauges' slow wander is
   * averaged on a ten-minute grid (interpolated); incident bursts are added
   * at the exact time for the few gauges they touch.
   */
  pressureRatio(t: number, sp: Setpoints): number {
    const n = this.gauges.length;
    if (n === 0) return 1;
    const physics = this.physics;
    const at = (k: number) => {
      let p = this.pressures.get(k);
      if (p === undefined) {
        const time = k * PRESSURE_GRID_MS;
        p = mean(this.gauges.map((g) => physics.baseLevel(g, time, sp)));
        if (this.pressures.size >= MEMO_SIZE) this.pressures.clear();
        this.pressures.set(k, p);
      }
      return p;
    };
    const x = t / PRESSURE_GRID_MS;
    const k = Math.floor(x);
    let sum = at(k) + (x - k) * (at(k + 1) - at(k));
    for (const g of this.burstGauges(t, sp)) {
      if (
        physics.book.effectsAt(g.name, t).length === 0 &&
        (sp.effectsAt?.(g.name, t).length ?? 0) === 0
      ) {
        continue;
      }
      const base = physics.baseLevel(g, t, sp);
      sum += (Number(physics.withEffects(g, base, t, sp)) - base) / n;
    }
    return sum / this.reference;
  }

  /** The gauges an incident of this shift or the one before, or a live fault, touches. */
  private burstGauges(t: number, sp: Setpoints): readonly DeviceDef[] {
    const live = sp.effectsAt === undefined
      ? []
      : this.gauges.filter((g) => (sp.effectsAt?.(g.name, t).length ?? 0) > 0);
    const k = IncidentBook.shiftOf(t);
    let list = this.bursts.get(k);
    if (list === undefined) {
      const book = this.physics.book;
      list = this.gauges.filter((g) =>
        book.plan(k).byDevice.has(g.name) || book.plan(k - 1).byDevice.has(g.name)
      );
      if (this.bursts.size >= MEMO_SIZE) this.bursts.clear();
      this.bursts.set(k, list);
    }
    return live.length === 0 ? list : [...new Set([...list, ...live])];
  }
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
