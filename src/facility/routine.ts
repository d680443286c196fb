/**
 * The crews' routine work, as it shows in the machine's history: an orbit
 * correction ends a slow orbit drift and moves a ring corrector, an
 * injection tuning ends a slow loss of injection efficiency and moves two
 * steering correctors, an RF phase scan steps `RF:PHASE:SETPT` through
 * ±10° and back (never within minutes of an injection tuning, whose
 * efficiency it would move). The drifts are effects on read-only signals;
 * the corrector moves and phase steps are setpoint history
 * ({@link PastSetpoints}), which the physics slews through and turns into
 * orbit and energy. A corrector keeps its new kick until the next
 * action of the same kind, so the history is bounded and replayable from
 * (seed, shift) alone. The e-log narrates each action with numbers read
 * from the same physics, so the archive backs every entry.
 *
 * @module
 */

import type { Effect, Happening } from "./effects.ts";
import type { DeviceDef } from "./facility.ts";
import type { PastStep, Setpoints } from "./setpoints.ts";
import { hashNumbers, Rng } from "./noise.ts";

const MIN_MS = 60_000;
const HOUR_MS = 60 * MIN_MS;
/** Ring BPMs that drift between orbit corrections. */
export const RING_BPMS = 60;
/** RF phase scan: offsets from the operating point, and the dwell at each. */
export const SCAN_HALF_RANGE_DEG = 10;
export const SCAN_DWELL_MS = 30_000;
const SCAN_MS = (2 * SCAN_HALF_RANGE_DEG + 1) * SCAN_DWELL_MS;
/** An RF phase scan keeps this far from an injection tuning (its before and after readings). */
const SCAN_CLEAR_MS = 10 * MIN_MS;

interface RoutineBase extends Happening {
  /** When the action takes effect (the correction, the scan's first step). */
  readonly t: number;
}

/** One routine action of a shift. */
export type RoutineAction =
  & RoutineBase
  & (
    | {
      kind: "orbit";
      /** The ring corrector moved, and its kick from the generated setpoint from `t` on. */
      corrector: string;
      kick: number;
    }
    | {
      kind: "injection";
      /** The linac and transfer-line steering correctors moved, and their kicks from `t` on. */
      h: string;
      v: string;
      hKick: number;
      vKick: number;
    }
    | { kind: "rf-scan"; steps: number }
  );

const pad = (n: number) => String(n).padStart(2, "0");
const BPM_NAMES = {
  X: Array.from({ length: RING_BPMS }, (_, i) => `RING:BPM:${pad(i + 1)}:X`),
  Y: Array.from({ length: RING_BPMS }, (_, i) => `RING:BPM:${pad(i + 1)}:Y`),
};

/** The routine actions of shift `k` (starting at `start`), oldest first. */
export function routineActions(seed: number, k: number, start: number): RoutineAction[] {
  const rng = new Rng(hashNumbers(seed, k, 0x7007));
  const out: RoutineAction[] = [];
  const when = () => Math.round(start + rng.range(1, 7) * HOUR_MS);
  if (rng.chance(0.45)) {
    const t = when();
    const from = Math.max(start, t - Math.round(rng.range(2, 5) * HOUR_MS));
    const effects: Effect[] = [];
    for (
      const [plane, amplitude] of [["X", rng.range(0.05, 0.15)], [
        "Y",
        rng.range(0.035, 0.09),
      ]] as const
    ) {
      // A betatron-like wave around the ring, of rms `amplitude`.
      const waves = rng.range(6, 12);
      const phase = rng.range(0, 2 * Math.PI);
      const names = BPM_NAMES[plane];
      for (let i = 1; i <= RING_BPMS; i++) {
        const delta = amplitude * Math.SQRT2 *
          Math.sin((2 * Math.PI * waves * i) / RING_BPMS + phase);
        effects.push({ kind: "drift", device: names[i - 1] as string, from, to: t, delta });
      }
    }
    out.push({
      kind: "orbit",
      id: `${k}.r${out.length}`,
      t,
      start: from,
      end: t + MIN_MS,
      effects,
      watch: [],
      corrector: `RING:COR:${rng.pick(["H", "V"])}${pad(rng.int(1, 40))}:SETPT`,
      kick: round(rng.range(-0.003, 0.003), 4),
    });
  }
  if (rng.chance(0.25)) {
    const t = when();
    const from = Math.max(start, t - Math.round(rng.range(1, 3) * HOUR_MS));
    out.push({
      kind: "injection",
      id: `${k}.r${out.length}`,
      t,
      start: from,
      end: t + 5 * MIN_MS,
      effects: [{ kind: "drift", device: "DIAG:INJ:EFF", from, to: t, delta: -rng.range(8, 17) }],
      watch: [],
      h: `LINAC:COR:H${pad(rng.int(1, 10))}:SETPT`,
      v: `BTS:COR:V${pad(rng.int(1, 6))}:SETPT`,
      hKick: round(rng.range(-0.01, 0.01), 3),
      vKick: round(rng.range(-0.01, 0.01), 3),
    });
  }
  if (rng.chance(0.12)) {
    // The scan moves the linac energy, hence the injection efficiency: not while injection is tuned.
    const tuning = out.find((a) => a.kind === "injection");
    let t = when();
    if (tuning && t < tuning.end + SCAN_CLEAR_MS && t + SCAN_MS > tuning.t - SCAN_CLEAR_MS) {
      t = tuning.end + SCAN_CLEAR_MS;
    }
    const steps = 2 * SCAN_HALF_RANGE_DEG + 1;
    out.push({
      kind: "rf-scan",
      id: `${k}.r${out.length}`,
      t,
      start: t,
      end: t + SCAN_MS,
      effects: [],
      // The beam energy, its spread and the injection follow the phase: their alarms are logged.
      watch: ["DIAG:ENERGY:MEAS", "DIAG:ENERGY:SPREAD", "DIAG:INJ:EFF"],
      steps,
    });
  }
  return out.sort((a, b) => a.t - b.t);
}

/** Which routine action may move a setpoint, by its name. */
function kindOf(name: string): RoutineAction["kind"] | null {
  if (name === "RF:PHASE:SETPT") return "rf-scan";
  if (!name.endsWith(":SETPT")) return null;
  if (name.startsWith("RING:COR:")) return "orbit";
  if (name.startsWith("LINAC:COR:H") || name.startsWith("BTS:COR:V")) return "injection";
  return null;
}

/** The kick an orbit correction or injection tuning left on a corrector (0: not moved). */
function kickOf(a: RoutineAction, name: string): number {
  if (a.kind === "orbit") return a.corrector === name ? a.kick : 0;
  if (a.kind === "injection") return a.h === name ? a.hKick : a.v === name ? a.vKick : 0;
  return 0;
}

function round(x: number, digits: number): number {
  return Number(x.toFixed(digits));
}

/** What {@link PastSetpoints} needs: the routine actions of any shift. */
export interface RoutineSource {
  routine(k: number): readonly RoutineAction[];
}

/** How far back a corrector's last move is looked for (a month of shifts). */
const LOOKBACK_SHIFTS = 96;
const SHIFT_MS = 8 * HOUR_MS;

/**
 * The setpoints as the crews left them: the generated ones, plus the kicks
 * of the last orbit correction and injection tuning and the steps of an RF
 * phase scan in progress. Live writes go on top (`SetpointStore`).
 */
export class PastSetpoints implements Setpoints {
  readonly #last = new Map<string, RoutineAction | null>();
  readonly #recent: Record<RoutineAction["kind"], { t: number; action?: RoutineAction }> = {
    "orbit": { t: NaN },
    "injection": { t: NaN },
    "rf-scan": { t: NaN },
  };
  readonly #kindOf = new Map<string, RoutineAction["kind"] | null>();
  readonly #previous = new WeakMap<RoutineAction, RoutineAction | null>();
  #moved: { t: number; names: ReadonlySet<string> } = { t: NaN, names: new Set() };

  constructor(
    private readonly source: RoutineSource,
    private readonly initial: ReadonlyMap<string, number | string>,
  ) {}

  at(def: DeviceDef, t: number): number | string {
    const initial = this.initial.get(def.name) ?? 0;
    const offset = this.offset(def.name, t);
    return offset === 0 || typeof initial !== "number" ? initial : initial + offset;
  }

  /** The routine change to a setpoint at time `t`, from its generated value. */
  offset(name: string, t: number): number {
    let kind = this.#kindOf.get(name);
    if (kind === undefined) this.#kindOf.set(name, kind = kindOf(name));
    if (kind === null) return 0;
    if (kind === "rf-scan") {
      const scan = this.source.routine(Math.floor(t / SHIFT_MS)).find((a) =>
        a.kind === "rf-scan" && t >= a.t && t < a.end
      );
      if (!scan) return 0;
      return Math.floor((t - scan.t) / SCAN_DWELL_MS) - SCAN_HALF_RANGE_DEG;
    }
    const a = this.lastBefore(kind, t);
    return a === undefined ? 0 : kickOf(a, name);
  }

  /**
   * The last routine change of a setpoint at or before `t`, from the value
   * the change before it left (settled: actions of a kind are hours apart,
   * scan steps 30 s); undefined when no action in force moved it.
   */
  pastStep(def: DeviceDef, t: number): PastStep | undefined {
    let kind = this.#kindOf.get(def.name);
    if (kind === undefined) this.#kindOf.set(def.name, kind = kindOf(def.name));
    if (kind === null) return undefined;
    const initial = this.initial.get(def.name);
    if (typeof initial !== "number") return undefined;
    if (kind === "rf-scan") {
      // The steps, then the return to the operating point at the scan's end.
      const scan = this.#scanAround(t);
      if (scan === undefined) return undefined;
      if (t >= scan.end) {
        return { t: scan.end, from: initial + SCAN_HALF_RANGE_DEG, to: initial };
      }
      const i = Math.floor((t - scan.t) / SCAN_DWELL_MS);
      const offset = (j: number) => j - SCAN_HALF_RANGE_DEG;
      return {
        t: scan.t + i * SCAN_DWELL_MS,
        from: i === 0 ? initial : initial + offset(i - 1),
        to: initial + offset(i),
      };
    }
    const a = this.lastBefore(kind, t);
    if (a === undefined) return undefined;
    const to = kickOf(a, def.name);
    const previous = this.#previousOf(a);
    const from = previous === undefined ? 0 : kickOf(previous, def.name);
    if (to === 0 && from === 0) return undefined;
    return { t: a.t, from: initial + from, to: initial + to };
  }

  /** The correctors (and RF phase) the actions in force at `t`, or just before them, moved. */
  pastMoved(t: number): ReadonlySet<string> {
    if (this.#moved.t === t) return this.#moved.names;
    const names = new Set<string>();
    for (const kind of ["orbit", "injection"] as const) {
      const a = this.lastBefore(kind, t);
      for (const action of a === undefined ? [] : [a, this.#previousOf(a)]) {
        if (action?.kind === "orbit") names.add(action.corrector);
        if (action?.kind === "injection") names.add(action.h).add(action.v);
      }
    }
    if (this.#scanAround(t) !== undefined) names.add("RF:PHASE:SETPT");
    this.#moved = { t, names };
    return names;
  }

  /** The RF phase scan whose steps, or return to the operating point, may still move the phase at `t`. */
  #scanAround(t: number): RoutineAction | undefined {
    return this.source.routine(Math.floor(t / SHIFT_MS)).find((a) =>
      a.kind === "rf-scan" && t >= a.t && t < a.end + SCAN_DWELL_MS
    );
  }

  /** The action of the same kind before `a`. */
  #previousOf(a: RoutineAction): RoutineAction | undefined {
    const known = this.#previous.get(a);
    if (known !== undefined) return known ?? undefined;
    const k = Math.floor(a.t / SHIFT_MS);
    const found = this.source.routine(k).findLast((b) => b.kind === a.kind && b.t < a.t) ??
      this.#lastThrough(a.kind, k - 1);
    this.#previous.set(a, found ?? null);
    return found;
  }

  /** The last action of `kind` at or before `t`. */
  lastBefore(kind: RoutineAction["kind"], t: number): RoutineAction | undefined {
    // A BPM reading asks once per corrector at one time: answer repeats from the last query.
    const recent = this.#recent[kind];
    if (recent.t === t) return recent.action;
    const k = Math.floor(t / SHIFT_MS);
    const here = this.source.routine(k).findLast((a) => a.kind === kind && a.t <= t);
    const action = here ?? this.#lastThrough(kind, k - 1);
    this.#recent[kind] = { t, action };
    return action;
  }

  /** The last action of `kind` in shift `k` or before (memoised: every BPM read asks). */
  #lastThrough(kind: RoutineAction["kind"], k: number): RoutineAction | undefined {
    const key = `${kind}:${k}`;
    const known = this.#last.get(key);
    if (known !== undefined) return known ?? undefined;
    let found: RoutineAction | undefined;
    for (let kk = k; kk > k - LOOKBACK_SHIFTS && !found; kk--) {
      found = this.source.routine(kk).findLast((a) => a.kind === kind);
    }
    if (this.#last.size > 4096) this.#last.clear();
    this.#last.set(key, found ?? null);
    return found;
  }
}
