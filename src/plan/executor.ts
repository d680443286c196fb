/**
 * Runs an approved plan. The executor's modules (this file and
 * `executor/`) are the only ones in the program that call
 * `ControlSystem.write`, and only `executor/writer.ts` does (a test
 * enforces this).
 *
 * Before running, it checks that the plan is exactly the one approved (its
 * hash) and preflights it again against live values. Then `executor/run.ts`
 * runs the actions, every write through `executor/writer.ts` (checked
 * against the live value, then confirmed by its readback), and
 * `executor/rollback.ts` the rollback and the restores.
 *
 * When the plan completes, its rollback runs. When it fails or is aborted,
 * the rollback runs only if it still fits the limits from where the machine
 * now is; then every written device the rollback did not put back is
 * restored to its original, newest first, in steps no larger than its
 * max_step, each confirmed. A rollback that fails makes the plan failed,
 * and the originals are restored.
 *
 * @module
 */
import { type Plan, planHash } from "../plan_model/plan.ts";
import type { PreflightedPlan, Violation } from "../plan_model/preflighted.ts";
import { preflight } from "./preflight.ts";
import { Run } from "./executor/run.ts";
import { errorText } from "./executor/text.ts";
import { type ExecuteDeps, type ExecutionResult, NotStarted } from "./executor/types.ts";

export type {
  ActionResult,
  Confirmation,
  ExecuteDeps,
  ExecutionResult,
  Restore,
} from "./executor/types.ts";
export { NotStarted } from "./executor/types.ts";
export { confirmationText } from "./executor/text.ts";

/**
 * Executes `plan` if its hash is `approvedHash`. Never throws for a machine
 * failure: the result says what happened, what was restored, and why.
 */
export async function executePlan(
  plan: Plan,
  approvedHash: string,
  deps: ExecuteDeps,
): Promise<ExecutionResult> {
  const startedAt = new Date(deps.now()).toISOString();
  const hash = await planHash(plan);
  const refused = (errors: string[], violations: Violation[] = []) => ({
    ...refusal(hash, errors, startedAt, deps.now),
    violations,
  });
  if (hash !== approvedHash) {
    return refused([
      `the plan's hash ${hash.slice(0, 12)}… is not the approved ${
        approvedHash.slice(0, 12)
      }…; nothing was written`,
    ]);
  }
  let checked: PreflightedPlan;
  try {
    checked = await preflight(plan, deps);
  } catch (e) {
    return refused([
      `preflight could not complete (${errorText(e, deps.signal)}); nothing was written`,
    ]);
  }
  const predicted = checked.prediction ? { prediction: checked.prediction } : {};
  if (!checked.ok) {
    return {
      ...refused(["preflight against live values failed; nothing was written"], checked.violations),
      ...predicted,
    };
  }
  // What runs is what was approved, name for name: an approved plan holds no alias to rewrite.
  if (checked.hash !== hash) {
    return refused([
      "the approved plan names a device other than as the control system writes it; " +
      "nothing was written",
    ]);
  }
  if (deps.beforeFirstWrite && !checked.readOnly) {
    try {
      await deps.beforeFirstWrite(checked.live);
    } catch (e) {
      return refused([
        e instanceof NotStarted
          ? `${e.message}; nothing was written`
          : `the original values could not be recorded before writing anything (${
            errorText(e, deps.signal)
          }); nothing was written`,
      ]);
    }
  }
  const outcome = await new Run(checked, deps).go();
  return {
    planHash: hash,
    ...outcome,
    startedAt,
    finishedAt: new Date(deps.now()).toISOString(),
    ...predicted,
  };
}

/** The result of a plan that was not run at all. */
export function refusal(
  planHash: string,
  errors: string[],
  startedAt: string,
  now: () => number,
): ExecutionResult {
  return {
    planHash,
    status: "refused",
    results: [],
    rollback: [],
    restores: [],
    csvFiles: [],
    violations: [],
    errors,
    startedAt,
    finishedAt: new Date(now()).toISOString(),
  };
}
