/**
 * A plan's predicted effect as the model reads it, in `propose_plan`'s and
 * `predict_effect`'s results: the worst predicted state, whether the beam
 * is lost and where, the devices that move most (start → predicted value,
 * the state and the step), written devices no model covers, warnings, and
 * the model it came from — so the model can shrink or split a plan before
 * the operator sees it.
 *
 * @module
 */
import type { Prediction } from "../plan_model/prediction.ts";
import { deviceText } from "../plan/preflight_checks/predicted.ts";

/** How many of the devices that move most the model is told of. */
const TOLD = 8;

export type PredictionJson =
  | { status: "unavailable"; reason: string; note: string }
  | {
    status: "predicted";
    source: string;
    made_at: string;
    /** NONE: no watched device is predicted worse than now. */
    worst: string;
    beam_lost?: string;
    /** e.g. "RING:BPM:29:X -0.45 → 3.2 mm, MAJOR (HIHI ≥ 3) at actions[3]". */
    moved: string[];
    uncovered?: string[];
    warnings?: string[];
    note: string;
  };

export function predictionJson(p: Prediction): PredictionJson {
  if (p.status === "unavailable") {
    return {
      status: "unavailable",
      reason: p.reason,
      note: "No prediction of this plan's effect could be made; the operator is told so.",
    };
  }
  return {
    status: "predicted",
    source: [p.source, ...p.models.map((m) => m.name)].join("; "),
    made_at: p.madeAt,
    worst: p.worst,
    ...(p.beamLost ? { beam_lost: `at ${p.beamLost.at}: ${p.beamLost.reason}` } : {}),
    moved: p.moved.slice(0, TOLD).map(deviceText),
    ...(p.uncovered.length ? { uncovered: p.uncovered } : {}),
    ...(p.warnings.length ? { warnings: p.warnings } : {}),
    note: "A prediction, not a measurement. A plan predicted to reach MAJOR or to lose the beam " +
      "is refused; make smaller or fewer changes, or split the plan.",
  };
}
