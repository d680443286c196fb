/**
 * The simulator's prediction: the plan run on a copy of the live facility
 * (its writes and faults so far, the same physics), noise-free, on a clock
 * of its own. Each write is followed until its readback settles, as the
 * executor waits for it; each WAIT and scan dwell runs in simulated time,
 * over at most `[prediction] wait_horizon_s` of it (what a write does — a
 * slew, a lost beam, a new lifetime — has happened by then; a plan of
 * hours of waits is predicted in a few samples). The watched devices are
 * read after every write and scan point and during waits.
 *
 * A state worse than before the plan is blamed on the plan only when a
 * second copy, with no writes, is better at that moment: the facility's
 * own history (a crew's routine scan, an RF trip) is not the plan's doing.
 * The same copy gives each compared device's natural motion, which widens
 * its tolerance while the plan runs.
 *
 * The copy is a separate simulator: nothing here reaches the live facility.
 *
 * @module
 */
import type { AlarmLimits, Reading, Value } from "../../adapters/adapter.ts";
import { type Clock, ManualClock } from "../../adapters/clock.ts";
import type { MadePrediction, Prediction } from "../../plan_model/prediction.ts";
import { type PathEvent, planPath, writtenOn } from "./path.ts";
import { type Reads, type SampleMeta, Tracker, type Watched } from "./track.ts";
import { checkDeadline, MAX_OBSERVED, MOVED_SHOWN, type PredictInput } from "./types.ts";
import type { ResponseModel } from "./types.ts";

/** What the prediction needs of a copy of the simulated facility. */
export interface SimulatorCopy {
  read(names: string[], signal?: AbortSignal): Promise<Reading[]>;
  /** Sets a device of the copy (never the live facility: the copy's own setpoints). */
  set(name: string, value: Value, signal?: AbortSignal): Promise<void>;
  describe(
    names: string[],
    signal?: AbortSignal,
  ): Promise<{ device: string; alarm?: AlarmLimits }[]>;
  watchedBy(written: readonly string[]): string[];
  /** The written devices' own readbacks, temperatures and states (among the watched). */
  ownOf(written: readonly string[]): string[];
  noiseOf(name: string): number;
  lossReason(): string | undefined;
}

/** Makes a noise-free copy of the live facility as it is now, on `clock`. */
export type CopyFactory = (clock: Clock) => SimulatorCopy;

/** Times within a WAIT (s from its start) the state is sampled at, up to the horizon. */
const WAIT_SAMPLES_S = [1, 10];
/** How often a write's readback is read while it settles: the writer's pauses, ms. */
const FIRST_POLL_MS = 1, POLL_MS = 50;
const DEFAULT_SETTLE_MS = 10_000;

export class SimulatedResponse implements ResponseModel {
  constructor(
    private readonly copy: CopyFactory,
    private readonly now: () => number,
    private readonly horizonS: number,
  ) {}

  async predict(input: PredictInput): Promise<Prediction> {
    const t0 = this.now();
    const clock = new ManualClock(t0);
    const sim = this.copy(clock);
    const path = planPath(input.plan, input.live, input.limits);
    const names = sim.watchedBy(writtenOn(path));
    const [start, infos] = await Promise.all([
      sim.read(names, input.signal),
      sim.describe(names, input.signal),
    ]);
    const own = new Set(sim.ownOf(writtenOn(path)));
    const watched: Watched[] = start.map((r, i) => ({
      device: r.device,
      units: r.units,
      noise: sim.noiseOf(r.device),
      ...(own.has(r.device) ? { own: true } : {}),
      ...(infos[i]?.alarm ? { alarm: infos[i]?.alarm } : {}),
    }));
    const tracker = new Tracker(watched, readsOf(start));
    const run = new PathRun(sim, clock, input, tracker, names, this.horizonS);
    for (const event of path) await run.step(event);
    const baseline = new Baseline(this.copy, names, input, t0);
    const beamLost = await baseline.judge(tracker, run.lost);
    const observe = await baseline.observation(tracker, input.policy);
    const made: MadePrediction = {
      status: "predicted",
      source: "simulator: the plan run on a copy of the live facility",
      models: [],
      madeAt: new Date(t0).toISOString(),
      worst: tracker.worst(),
      ...(beamLost ? { beamLost } : {}),
      moved: tracker.moved(MOVED_SHOWN),
      watched: names.length,
      uncovered: [],
      warnings: run.warnings,
      ...(observe ? { observe } : {}),
    };
    return made;
  }
}

/** The plan's path run on the copy, sampled. */
class PathRun {
  readonly warnings: string[] = [];
  /** The first sample where the ring holds no beam it held before the plan, and why. */
  lost?: { sample: number; reason: string };
  readonly #startNoBeam: boolean;

  constructor(
    private readonly sim: SimulatorCopy,
    private readonly clock: ManualClock,
    private readonly input: PredictInput,
    private readonly tracker: Tracker,
    private readonly names: string[],
    private readonly horizonS: number,
  ) {
    this.#startNoBeam = tracker.start.status.includes("NO_BEAM");
  }

  async step(e: PathEvent): Promise<void> {
    checkDeadline(this.input);
    if (e.kind === "write") {
      try {
        await this.sim.set(e.device, e.value, this.input.signal);
      } catch (err) {
        throw new Error(
          `the simulator's copy refused ${e.label}: ${e.device} = ${e.value} (${
            err instanceof Error ? err.message : String(err)
          })`,
        );
      }
      await this.settle(e.device, e.value, e.label);
      if (e.sample) await this.sample({ label: e.label, key: e.sample, after: e.after });
      return;
    }
    const span = Math.min(e.seconds, this.horizonS);
    let at = 0;
    for (const t of e.dwell ? [] : WAIT_SAMPLES_S.filter((s) => s < span)) {
      this.clock.advance((t - at) * 1000);
      at = t;
      await this.sample({ label: `${e.label} (${t} s in)`, after: e.after });
    }
    this.clock.advance((span - at) * 1000);
    await this.sample({ label: e.label, key: e.sample, after: e.after });
  }

  /** Follows the write's readback as the executor does, on the copy's clock. */
  async settle(device: string, value: Value, label: string): Promise<void> {
    const partner = this.input.readbacks[device];
    const read = partner?.device ?? device;
    const tol = this.input.tolerances[device] ?? 1e-6;
    const settleMs = partner?.settleMs ?? DEFAULT_SETTLE_MS;
    let waited = 0;
    for (let pause = FIRST_POLL_MS;; pause = Math.min(POLL_MS, 2 * pause)) {
      const [r] = await this.sim.read([read], this.input.signal);
      if (near(r?.value ?? null, value, tol)) return;
      if (waited >= settleMs) {
        this.warnings.push(
          `in the prediction, ${read} did not reach ${String(value)} within ±${tol} ` +
            `after ${label}: the write may not be confirmed`,
        );
        return;
      }
      this.clock.advance(pause);
      waited += pause;
    }
  }

  async sample(meta: Omit<SampleMeta, "time">): Promise<void> {
    checkDeadline(this.input);
    const readings = await this.sim.read(this.names, this.input.signal);
    const reads = readsOf(readings);
    if (!this.lost && !this.#startNoBeam && reads.status.includes("NO_BEAM")) {
      this.lost = {
        sample: this.tracker.samples.length,
        reason: this.sim.lossReason() ?? "the stored current falls below the beam threshold",
      };
    }
    this.tracker.record({ ...meta, time: this.clock.now() }, reads);
  }
}

/** The machine without the plan: a second copy, read at the samples' times. */
class Baseline {
  readonly #clock: ManualClock;
  readonly #sim: SimulatorCopy;

  constructor(
    copy: CopyFactory,
    private readonly names: string[],
    private readonly input: PredictInput,
    private readonly startTime: number,
  ) {
    this.#clock = new ManualClock(0);
    this.#sim = copy(this.#clock);
  }

  async readAt(time: number, devices: number[]): Promise<Reads> {
    checkDeadline(this.input);
    this.#clock.set(time);
    return readsOf(
      await this.#sim.read(devices.map((i) => this.names[i] as string), this.input.signal),
    );
  }

  /**
   * Forgets every escalation the machine has without the plan too; says
   * where the beam is lost when the copy without the plan keeps it.
   */
  async judge(
    tracker: Tracker,
    lost: PathRun["lost"],
  ): Promise<MadePrediction["beamLost"]> {
    let blamed = lost;
    for (const [sample, devices] of tracker.escalations()) {
      const time = tracker.samples[sample]?.time ?? 0;
      const base = await this.readAt(time, devices);
      devices.forEach((d, k) => tracker.discount(sample, d, base.severity[k] ?? "NONE"));
      if (lost?.sample === sample && base.status.includes("NO_BEAM")) blamed = undefined;
    }
    if (!blamed) return undefined;
    return { at: tracker.samples[blamed.sample]?.label ?? "", reason: blamed.reason };
  }

  /**
   * The devices the executor compares, each with a tolerance of its noise
   * (that of the difference of two readings, times `[prediction]
   * deviation_sigmas`) and twice the most it moves by itself over the plan.
   */
  async observation(tracker: Tracker, policy: PredictInput["policy"]) {
    const noiseFloor = (i: number) =>
      policy.deviationSigmas * Math.SQRT2 * (tracker.watched[i]?.noise ?? 0);
    const candidates = tracker.observable(2 * MAX_OBSERVED, noiseFloor);
    if (!candidates.length) return undefined;
    const keyed = tracker.samples.filter((s) => s.key !== undefined && !s.after);
    const first = await this.readAt(this.startTime, candidates);
    const motion = candidates.map(() => 0);
    for (const s of keyed) {
      const base = await this.readAt(s.time, candidates);
      candidates.forEach((_, k) => {
        const a = base.values[k], b = first.values[k];
        if (a !== null && a !== undefined && b !== null && b !== undefined) {
          motion[k] = Math.max(motion[k] ?? 0, Math.abs(a - b));
        }
      });
    }
    const floorOf = new Map(candidates.map((d, k) => [d, noiseFloor(d) + 2 * (motion[k] ?? 0)]));
    const chosen = tracker.observable(MAX_OBSERVED, (i) => floorOf.get(i) ?? 0);
    return tracker.observationPlan(
      chosen,
      chosen.map((i) => floorOf.get(i) ?? 0),
      policy.deviationRelative,
    );
  }
}

function readsOf(readings: Reading[]): Reads {
  return {
    values: readings.map((r) => (r.ok && typeof r.value === "number" ? r.value : null)),
    severity: readings.map((r) => r.severity),
    status: readings.map((r) => r.status),
  };
}

function near(got: Value | null, want: Value, tol: number): boolean {
  if (typeof got === "number" && typeof want === "number") {
    return Math.abs(got - want) <= tol + 1e-12;
  }
  return got === want;
}
