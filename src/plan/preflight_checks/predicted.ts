/**
 * `predicted_effect`: the plan's cumulative effect on the watched devices,
 * predicted by the facility's response model (every write, every scan
 * point, then the rollback or the restores), and the worst alarm state it
 * reaches. A plan predicted to bring a watched device to `[prediction]
 * refuse_at` (default MAJOR), worse than before and than the machine would
 * be without it, or to lose the beam, is refused, naming the devices and
 * their predicted values; a smaller crossing (MINOR) is a warning shown
 * above the approval question.
 *
 * A model that cannot answer (no model for this facility, a damaged
 * response file, a copy that throws, a prediction that runs past
 * `[prediction] max_seconds`) is never a silent pass: the prediction says
 * "unavailable" and why, which the table shows as a warning, and which
 * refuses the plan when `[prediction] required` is true. A written device
 * no model covers is said so the same way.
 *
 * @module
 */
import type { Prediction, PredictionPolicy } from "../../plan_model/prediction.ts";
import { severityRank } from "../../plan_model/prediction.ts";
import type { PredictedDevice } from "../../plan_model/prediction.ts";
import type { Violation } from "../../plan_model/preflighted.ts";
import { type PredictInput, PredictionTimeout, type ResponseModel } from "../predict/types.ts";

/** How many devices one refusal names, worst first. */
const NAMED = 5;

/** The response model of this facility and the policy it is held to. */
export interface PredictionDeps {
  /** Absent: this facility has no model (said why in `unavailable`). */
  model?: ResponseModel;
  policy: PredictionPolicy;
  /** Why there is no model, when there is none (e.g. no `[prediction] response_dir`). */
  unavailable?: string;
}

/** Runs the model within its time; any failure becomes an unavailable prediction, said why. */
export async function predictEffect(
  deps: PredictionDeps,
  input: Omit<PredictInput, "policy" | "deadline">,
): Promise<Prediction> {
  if (!deps.model) {
    return {
      status: "unavailable",
      reason: deps.unavailable ?? "this facility has no response model",
    };
  }
  const started = performance.now();
  try {
    return await deps.model.predict({
      ...input,
      policy: deps.policy,
      deadline: started + deps.policy.maxMs,
    });
  } catch (e) {
    if (input.signal?.aborted) throw e;
    const why = e instanceof PredictionTimeout
      ? `${e.message}, after ${Math.round(performance.now() - started)} ms`
      : `the response model failed: ${e instanceof Error ? e.message : String(e)}`;
    return { status: "unavailable", reason: oneLine(why) };
  }
}

/** The violations a prediction gives under `policy`. */
export function predictedEffectViolations(p: Prediction, policy: PredictionPolicy): Violation[] {
  if (p.status === "unavailable") {
    return policy.required
      ? [{
        check: "predicted_effect",
        where: "plan",
        message: `no prediction of this plan's effect is possible (${p.reason}), and ` +
          "[prediction] required is true; fix the model or set required = false",
      }]
      : [];
  }
  const out: Violation[] = [];
  if (p.beamLost) {
    out.push({
      check: "predicted_effect",
      where: whereOf(p.beamLost.at),
      message:
        `predicted (${p.source}): the beam is lost at ${p.beamLost.at} (${p.beamLost.reason})`,
    });
  }
  const refused = p.moved.filter((d) => severityRank(d.worst) >= severityRank(policy.refuseAt));
  if (refused.length) {
    const first = refused[0] as PredictedDevice;
    const named = refused.slice(0, NAMED).map(deviceText).join("; ");
    const more = refused.length > NAMED ? ` (${refused.length} devices in all)` : "";
    out.push({
      check: "predicted_effect",
      where: whereOf(first.at ?? "plan"),
      device: first.device,
      message: `predicted (${p.source}) to reach ${policy.refuseAt} or worse: ${named}${more}; ` +
        "make smaller or fewer changes, or split the plan",
    });
  }
  if (policy.required && p.uncovered.length) {
    out.push({
      check: "predicted_effect",
      where: "plan",
      message: `no response model covers ${p.uncovered.join(", ")}, and [prediction] required ` +
        "is true: nothing can be predicted of these writes",
    });
  }
  return out;
}

/**
 * A device as a prediction line gives it: `RING:BPM:29:X -0.45 → 3.2 mm, MAJOR (HIHI ≥ 3) at actions[3]`.
 */
export function deviceText(d: PredictedDevice): string {
  const u = d.units ? ` ${d.units}` : "";
  const reached = d.value !== undefined && d.value !== null ? d.value : d.extreme;
  const move = `${show(d.start)} → ${show(reached)}${u}`;
  if (d.worst === "NONE") return `${d.device} ${move}`;
  const cmp = d.status === "LOW" || d.status === "LOLO" ? "≤" : "≥";
  const limit = d.limit !== undefined ? ` ${cmp} ${show(d.limit)}` : "";
  const status = d.status ? ` (${d.status}${limit})` : "";
  return `${d.device} ${move}, ${d.worst}${status}${d.at ? ` at ${d.at}` : ""}`;
}

function show(v: number | null): string {
  if (v === null) return "?";
  return String(Number(v.toPrecision(3)));
}

/** A violation's `where`: the action a label names (`actions[5] point 7` → `actions[5]`), else `plan`. */
function whereOf(label: string): string {
  return /^(actions|rollback)\[\d+\]/.exec(label)?.[0] ?? "plan";
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 400);
}
