/**
 * What a response model is given and what it answers: the plan as
 * preflight canonicalised it, the values of the devices it writes, how
 * each write is confirmed, the limits (restores ramp by max_step), and a
 * deadline. Implementations: the simulator's copy (`simulated.ts`) and the
 * linear model of a facility's response files (`linear.ts`).
 *
 * @module
 */
import type { Value } from "../../adapters/adapter.ts";
import type { Plan } from "../../plan_model/plan.ts";
import type { ReadbackPartner } from "../../plan_model/preflighted.ts";
import type { Prediction, PredictionPolicy } from "../../plan_model/prediction.ts";
import type { LimitsTable } from "../../safety/limits.ts";

export interface PredictInput {
  plan: Plan;
  /** The value of every device the plan writes before it, as preflight read it. */
  live: Record<string, Value | null>;
  readbacks: Record<string, ReadbackPartner>;
  tolerances: Record<string, number>;
  limits: LimitsTable;
  policy: PredictionPolicy;
  signal?: AbortSignal;
  /** `performance.now()` past which the model gives up ({@link PredictionTimeout}). */
  deadline: number;
}

/** A facility's response: what a plan will do to the devices it watches. */
export interface ResponseModel {
  /** Never writes to the machine; throws only for a model that cannot answer (said in one line). */
  predict(input: PredictInput): Promise<Prediction>;
}

/** The prediction ran past its deadline. */
export class PredictionTimeout extends Error {
  override name = "PredictionTimeout";
}

/** Throws {@link PredictionTimeout} past the deadline, the signal's reason once aborted. */
export function checkDeadline(input: Pick<PredictInput, "deadline" | "signal">): void {
  input.signal?.throwIfAborted();
  if (performance.now() > input.deadline) {
    throw new PredictionTimeout(
      "the prediction took longer than its time ([prediction] max_seconds)",
    );
  }
}

/** How many devices a prediction lists as moving most. */
export const MOVED_SHOWN = 10;
/** How many devices the executor compares with the prediction while a plan runs. */
export const MAX_OBSERVED = 16;
