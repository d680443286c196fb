/**
 * The crews' routine work, as it shows in the machine's history: an orbit
 * correction sets the ring's correctors against the orbit's slow wander, an
 * injection tuning steers the end of the linac and of the BTS line onto the
 * injection BPMs, an RF phase scan steps `RF:PHASE:SETPT` through ±10° and
 * back (never within minutes of an injection tuning, whose efficiency it
 * would move). The kicks a correction sets are worked out from the machine
 * at that moment (`corrections.ts`), so what the e-log reports it improved
 * is the effect of those kicks. The corrector moves and phase steps are
 * setpoint history ({@link PastSetpoints}), which the physics slews through
 * and turns into orbit and energy. A correction keeps its kicks until the
 * next one of the same kind, so the history is bounded and replayable from
 * (seed, shift) alone.
 *
 * @module
 */

import type { Happening } from "./effects.ts";
import type { DeviceDef } from "./facility.ts";
import type { PastStep, Setpoints } from "./setpoints.ts";
import { hashNumbers, Rng } from "./noise.ts";

const MIN_MS = 60_000;
const HOUR_MS = 60 * MIN_MS;
/** Ring BPMs that drift between orbit corrections. */
export const RING_BPMS = 60;
/** Routine corrector changes have settled this long after they were made. */
const SETTLE_MS = 10_000;
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
    | { kind: "orbit" }
    | { kind: "injection" }
    | { kind: "rf-scan"; steps: number }
  );

const pad = (n: number) => String(n).padStart(2, "0");
const XBPMS = Array.from(
  { length: 24 },
  (_, i) => [`BL:${pad(i + 1)}:XBPM:X`, `BL:${pad(i + 1)}:XBPM:Y`],
)
  .flat();
const BPMS = Array.from({ length: RING_BPMS }, (_, i) => [
  `RING:BPM:${pad(i + 1)}:X`,
  `RING:BPM:${pad(i + 1)}:Y`,
]).flat();

/** The routine actions of shift `k` (starting at `start`), oldest first. */
export function routineActions(seed: number, k: number, start: number): RoutineAction[] {
  const rng = new Rng(hashNumbers(seed, k, 0x7007));
  const out: RoutineAction[] = [];
  const when = () => Math.round(start + rng.range(1, 7) * HOUR_MS);
  if (rng.chance(0.45)) {
    const t = when();
    // The orbit and the photon beams move when the correctors do: their alarms are logged.
    out.push({
      kind: "orbit",
      id: `${k}.r${out.length}`,
      t,
      start: t,
      end: t + MIN_MS,
      effects: [],
      watch: [...BPMS, ...XBPMS],
    });
  }
  if (rng.chance(0.25)) {
    const t = when();
    out.push({
      kind: "injection",
      id: `${k}.r${out.length}`,
      t,
      start: t,
      end: t + 5 * MIN_MS,
      effects: [],
      watch: ["DIAG:INJ:EFF", "LINAC:BPM:20:X", "LINAC:BPM:20:Y", "LTB:BPM:04:X", "LTB:BPM:04:Y"],
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
      // The beam energy, its spread, the injection and the LTB line's dispersion orbit follow the
      // phase: their alarms are logged.
      watch: [
        "DIAG:ENERGY:MEAS",
        "DIAG:ENERGY:SPREAD",
        "DIAG:INJ:EFF",
        "LTB:BPM:01:X",
        "LTB:BPM:02:X",
        "LTB:BPM:03:X",
        "LTB:BPM:04:X",
      ],
      steps,
    });
  }
  return out.sort((a, b) => a.t - b.t);
}

/** The kicks a correction sets, from the machine at its time (see `corrections.ts`). */
export interface KickSource {
  /** Ring correctors set by an orbit correction at `t`, and their kicks from the initial settings. */
  orbit(t: number): ReadonlyMap<string, number>;
  /** Steering correctors set by an injection tuning at `t`, and their kicks. */
  injection(t: number): ReadonlyMap<string, number>;
  /** Every corrector an orbit correction sets. */
  readonly orbitCorrectors: readonly string[];
}

/** The injection tuning's correctors. */
const INJECTION = new Set([
  "LINAC:COR:H10:SETPT",
  "LINAC:COR:V10:SETPT",
  "BTS:COR:H06:SETPT",
  "BTS:COR:V06:SETPT",
]);

/** Which routine action may move a setpoint, by its name. */
function kindOf(name: string): RoutineAction["kind"] | null {
  if (name === "RF:PHASE:SETPT") return "rf-scan";
  if (!name.endsWith(":SETPT")) return null;
  if (name.startsWith("RING:COR:")) return "orbit";
  if (INJECTION.has(name)) return "injection";
  return null;
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
  readonly #movedSets = new Map<string, ReadonlySet<string>>();

  constructor(
    private readonly source: RoutineSource,
    private readonly initial: ReadonlyMap<string, number | string>,
    private readonly kicks: KickSource,
  ) {}

  /**
   * The kicks the last orbit correction at or before `t` left on the ring's
   * correctors, once they have settled (they move at 0.5 mrad/s: a second
   * covers any routine change); undefined before then or without one.
   */
  pastRingKicks(t: number): ReadonlyMap<string, number> | undefined {
    const a = this.lastBefore("orbit", t);
    if (a === undefined || t < a.t + SETTLE_MS) return undefined;
    return this.kicks.orbit(a.t);
  }

  /** The kick an orbit correction or injection tuning left on a corrector (0: not moved). */
  kickOf(a: RoutineAction, name: string): number {
    if (a.kind === "orbit") return this.kicks.orbit(a.t).get(name) ?? 0;
    if (a.kind === "injection") return this.kicks.injection(a.t).get(name) ?? 0;
    return 0;
  }

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
    return a === undefined ? 0 : this.kickOf(a, name);
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
    const to = this.kickOf(a, def.name);
    const previous = this.#previousOf(a);
    const from = previous === undefined ? 0 : this.kickOf(previous, def.name);
    if (to === 0 && from === 0) return undefined;
    return { t: a.t, from: initial + from, to: initial + to };
  }

  /**
   * The correctors (and RF phase) the actions in force at `t`, or just
   * before them, moved: one set per combination of actions, shared.
   */
  pastMoved(t: number): ReadonlySet<string> {
    if (this.#moved.t === t) return this.#moved.names;
    const orbit = this.lastBefore("orbit", t);
    const injection = this.lastBefore("injection", t);
    const scanning = this.#scanAround(t) !== undefined;
    const key = `${orbit?.id ?? ""}|${orbit ? this.#previousOf(orbit)?.id ?? "" : ""}|${
      injection?.id ?? ""
    }|${injection ? this.#previousOf(injection)?.id ?? "" : ""}|${scanning}`;
    let names = this.#movedSets.get(key);
    if (names === undefined) {
      const set = new Set<string>();
      for (const a of [orbit, injection]) {
        for (const action of a === undefined ? [] : [a, this.#previousOf(a)]) {
          if (action?.kind === "orbit") { for (const n of this.kicks.orbitCorrectors) set.add(n); }
          if (action?.kind === "injection") { for (const n of INJECTION) set.add(n); }
        }
      }
      if (scanning) set.add("RF:PHASE:SETPT");
      if (this.#movedSets.size > 256) this.#movedSets.clear();
      this.#movedSets.set(key, names = set);
    }
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
