/**
 * `predict_effect`: what a plan would do to the machine, without proposing
 * it. The plan is preflighted as `propose_plan` would (limits, live values,
 * the predicted effect); nothing is shown to the operator, saved, approved
 * or written. Read-only: the prediction runs on a copy of the facility or
 * on the facility's response files.
 *
 * @module
 */
import { normalisePlanInput, Plan } from "../plan_model/plan.ts";
import { violationText } from "../plan_model/preflighted.ts";
import { defineTool, ToolError } from "./define.ts";
import { type PredictionJson, predictionJson } from "./prediction_json.ts";

const DESCRIPTION =
  `Predict what a plan would do to the machine without proposing it: the same checks as \
propose_plan (limits, max_step, live values) and the predicted effect on the beam (orbit, losses, current, \
tunes: the devices that move most and the worst alarm state reached). Nothing is shown to the operator, \
saved or written. Use it to size a change before proposing it. Same plan format as propose_plan.`;

export interface PredictEffectResult {
  plan_hash: string;
  /** Whether propose_plan would pass preflight with this plan now. */
  ok: boolean;
  violations: string[];
  prediction: PredictionJson | null;
  note: string;
}

export const predictEffect = defineTool<typeof Plan, PredictEffectResult>({
  name: "predict_effect",
  description: DESCRIPTION,
  parameters: Plan,
  normalise: normalisePlanInput,
  readOnly: true,
  // Device names, units and values of the prediction, and a response file's own words in its errors.
  outsideText: "the facility (the predicted devices, and errors) and its response files",
  async execute(plan, { plans, signal }) {
    if (!plans) throw new ToolError("no plan checks are available to this agent");
    const checked = await plans.service.check(plan, signal);
    return {
      plan_hash: checked.hash,
      ok: checked.ok,
      violations: checked.violations.map(violationText),
      prediction: checked.prediction ? predictionJson(checked.prediction) : null,
      note: "Nothing was proposed or written." +
        (checked.prediction
          ? ""
          : " A plan without writes, or refused by a check, is not predicted."),
    };
  },
});
