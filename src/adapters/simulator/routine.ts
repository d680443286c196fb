/**
 * The crews' routine work, as it shows in the machine's history: an orbit
 * correction ends a slow orbit drift and moves a ring corrector, an
 * injection tuning ends a slow loss of injection efficiency and moves two
 * steering correctors, an RF phase scan steps `RF:PHASE:SETPT` through
 * ±10° and back. The drifts are effects on read-only signals; the
 * corrector moves are setpoint history ({@link PastSetpoints}), which the
 * physics turns into orbit. A corrector keeps its new kick until the next
 * action of the same kind, so the history is bounded and replayable from
 * (seed, shift) alone. The e-log narrates each action with numbers read
 * from the same physics, so the archive backs every entry.
 *
 * @module
 */

import type { Effect } from "./effects.ts";
import type { DeviceDef } from "./facility.ts";
import { hashNumbers, Rng } from "./noise.ts";

const MIN_MS = 60_000;
const HOUR_MS = 60 * MIN_MS;
/** Ring BPMs that drift between orbit corrections. */
export const RING_BPMS = 60;
/** RF phase scan: offsets from the operating point, and the dwell at each. */
export const SCAN_HALF_RANGE_DEG = 10;
export const SCAN_DWELL_MS = 30_000;

interface RoutineBase {
  readonly id: string;
  /** When the action takes effect (the correction, the scan's first step). */
  readonly t: number;
  /** First moment any effect applies, and when all are over (for the alarm log). */
  readonly start: number;
  readonly end: number;
  readonly effects: readonly Effect[];
  readonly watch: readonly string[];
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
    const t = when();
    const steps = 2 * SCAN_HALF_RANGE_DEG + 1;
    out.push({
      kind: "rf-scan",
      id: `${k}.r${out.length}`,
      t,
      start: t,
      end: t + steps * SCAN_DWELL_MS,
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
export class PastSetpoints {
  readonly #last = new Map<string, RoutineAction | null>();
  readonly #recent: Record<RoutineAction["kind"], { t: number; action?: RoutineAction }> = {
    "orbit": { t: NaN },
    "injection": { t: NaN },
    "rf-scan": { t: NaN },
  };
  readonly #kindOf = new Map<string, RoutineAction["kind"] | null>();

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
    if (a?.kind === "orbit") return a.corrector === name ? a.kick : 0;
    if (a?.kind === "injection") return a.h === name ? a.hKick : a.v === name ? a.vKick : 0;
    return 0;
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
