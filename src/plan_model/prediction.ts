/**
 * What a plan is predicted to do to the beam: the watched devices that move
 * most, the worst alarm state the plan brings any of them to, the written
 * devices no model covers, and what the executor compares while the plan
 * runs. Preflight's `predicted_effect` check makes it (`src/plan/predict/`);
 * the approval table, `plan show --json`, `propose_plan` and the executor
 * read it. Pure types and small helpers.
 *
 * @module
 */
import type { Severity } from "../adapters/adapter.ts";

/** The `[prediction]` settings a plan's prediction is held to. */
export interface PredictionPolicy {
  enabled: boolean;
  /** A plan predicted to bring a watched device to this severity, worse than before, is refused. */
  refuseAt: "MINOR" | "MAJOR" | "INVALID";
  /** Refuse a plan whose effect cannot be predicted, or that writes a device no model covers. */
  required: boolean;
  /** Compare readings with the prediction while a plan runs. */
  observe: boolean;
  deviationRelative: number;
  deviationSigmas: number;
  /** Longest a prediction may take, ms of real time. */
  maxMs: number;
}

/** The policy of a configuration without a `[prediction]` table. */
export const DEFAULT_PREDICTION_POLICY: PredictionPolicy = {
  enabled: true,
  refuseAt: "MAJOR",
  required: false,
  observe: true,
  deviationRelative: 0.25,
  deviationSigmas: 6,
  maxMs: 20_000,
};

/** One watched device along the plan, as predicted. */
export interface PredictedDevice {
  device: string;
  units: string;
  /** Its value before the plan, as the model has it. */
  start: number | null;
  /** The value furthest from `start` the plan takes it to. */
  extreme: number | null;
  /** Its value once the plan and what follows it (rollback or restores) are done. */
  end: number | null;
  /** Its severity before the plan. */
  startSeverity: Severity;
  /**
   * The worst severity the plan brings it to, counted only where it is worse
   * than before the plan and than the machine would be without the plan.
   */
  worst: Severity;
  /** The alarm status there: HIHI, HIGH, LOW, LOLO, NO_BEAM… */
  status?: string;
  /** The threshold crossed, when the device has one for that status. */
  limit?: number;
  /** Where the worst is reached: `actions[3]`, `actions[5] point 7`, `rollback[0]`, `restore 2`. */
  at?: string;
  /** The value there. */
  value?: number | null;
  /** How much of the way to its nearest alarm threshold the plan takes it (1: there). */
  score: number;
}

/** A model the prediction came from (a response file) and how old it is. */
export interface ModelSource {
  name: string;
  /** When it was measured (ISO). */
  measured?: string;
  ageDays?: number;
}

/**
 * What the executor compares while the plan runs: at each step of the
 * plan's actions, each device's predicted change from before the plan.
 */
export interface ObservationPlan {
  devices: string[];
  units: string[];
  /** Step key (`actions[3]`, `actions[5]#7`) → predicted change per device (null: none known). */
  steps: Record<string, (number | null)[]>;
  /** Each device's absolute tolerance: its noise (and natural motion), in its units. */
  floors: number[];
  /** A deviation larger than this share of the predicted change (and the floor) stops the plan. */
  relative: number;
}

/** A prediction that could not be made, and why: shown, and refused when prediction is required. */
export interface NoPrediction {
  status: "unavailable";
  reason: string;
}

export interface MadePrediction {
  status: "predicted";
  /** What made it: the simulator's copy of the live facility, or the response files. */
  source: string;
  models: ModelSource[];
  madeAt: string;
  /** The worst severity the plan brings a watched device to (NONE: nothing worse than before). */
  worst: Severity;
  /** Where the beam is predicted to be lost, and why. */
  beamLost?: { at: string; reason: string };
  /** The devices that move most, worst and furthest first. */
  moved: PredictedDevice[];
  /** How many devices were watched. */
  watched: number;
  /** Written devices no model covers: nothing is predicted of them. */
  uncovered: string[];
  /** Said above the approval question: a MINOR crossing, a stale model, a damaged file… */
  warnings: string[];
  /** What the executor compares while the plan runs (absent when nothing can be compared). */
  observe?: ObservationPlan;
}

export type Prediction = NoPrediction | MadePrediction;

/** One comparison the executor made while the plan ran. */
export interface ObservedStep {
  where: string;
  /** Observed change from before the plan, per device of the observation plan. */
  observed: (number | null)[];
  predicted: (number | null)[];
}

/** A change that differed from its prediction beyond tolerance: what stopped the plan. */
export interface Deviation {
  where: string;
  device: string;
  units: string;
  /** Predicted and observed change from before the plan. */
  predicted: number;
  observed: number;
  tolerance: number;
}

/** What the executor kept of the prediction and of what it observed. */
export interface ObservedRun {
  source: string;
  devices: string[];
  units: string[];
  steps: ObservedStep[];
  deviation?: Deviation;
  /** Why nothing (more) was compared, when something prevented it. */
  note?: string;
}

const RANK: Record<Severity, number> = { NONE: 0, MINOR: 1, MAJOR: 2, INVALID: 3 };

/** The order of severities: NONE < MINOR < MAJOR < INVALID. */
export function severityRank(s: Severity): number {
  return RANK[s] ?? 0;
}

/** A deviation in one line, with both values. */
export function deviationText(d: Deviation): string {
  const u = d.units ? ` ${d.units}` : "";
  const show = (v: number) => `${v >= 0 ? "+" : ""}${Number(v.toPrecision(4))}`;
  return `${d.device} changed by ${show(d.observed)}${u} at ${d.where}; the prediction said ` +
    `${show(d.predicted)}${u} (tolerance ±${Number(d.tolerance.toPrecision(3))}${u})`;
}
