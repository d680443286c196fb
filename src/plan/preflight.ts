/**
 * Checks a whole plan against the live machine and the safety limits before
 * anyone is asked to approve it, and again right before it runs. The checks
 * are named (see `PREFLIGHT_CHECKS`) and each lives in
 * `preflight_checks/`; every violation is listed at once, each naming the
 * check, action, device, value and limit, so the model (or the operator)
 * can correct the plan in one go.
 *
 * @module
 */
import type { ControlReader, DeviceInfo, Value } from "../adapters/adapter.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { isReadOnly, type Plan, planHash } from "../plan_model/plan.ts";
import type { PreflightedPlan, SafetyPolicy, Violation } from "../plan_model/preflighted.ts";
import { findReadbacks } from "./readback.ts";
import {
  countScanPoints,
  currentValueKnown,
  deviceExists,
  estimateSeconds,
  maxPlanSeconds,
  maxScanPoints,
  noRepeatedWrite,
  readbackFound,
  valueChecks,
} from "./preflight_checks/plan_checks.ts";
import { tolerance } from "./preflight_checks/value.ts";
import {
  predictedEffectViolations,
  predictEffect,
  type PredictionDeps,
} from "./preflight_checks/predicted.ts";
import type { Prediction } from "../plan_model/prediction.ts";
import { canonicalPlan } from "./preflight_checks/names.ts";
import { type DeviceNaming, namingFor } from "../adapters/device_names.ts";
import {
  devicesOf,
  type Facts,
  planSteps,
  type Step,
  walkWrites,
  writtenBy,
} from "./preflight_checks/walk.ts";

export { checkValue, tolerance } from "./preflight_checks/value.ts";

/** How long a readback may take to come within tolerance when nothing else says: 10 s. */
export const DEFAULT_SETTLE_MS = 10_000;

export interface PreflightDeps {
  /** Preflight only reads. */
  cs: ControlReader;
  limits: LimitsTable;
  policy: SafetyPolicy;
  now(): number;
  signal?: AbortSignal;
  /** Settle time of a readback whose limits entry gives no `settle_s` ({@link DEFAULT_SETTLE_MS}). */
  readbackTimeoutMs?: number;
  /** The facility's response model and `[prediction]` policy (absent: no prediction is made). */
  prediction?: PredictionDeps;
}

/** The naming preflight holds names to: the limits table's, else the control system kind's. */
export function namingOf(deps: Pick<PreflightDeps, "cs" | "limits">): DeviceNaming {
  return deps.limits.naming ?? namingFor(deps.cs.kind);
}

/**
 * Runs every check on `plan`: first `device_name`, which rewrites every
 * alias to the control system's one name for it (the plan checked, shown,
 * hashed and run is that canonical plan) and refuses what it cannot; then
 * the steps' checks in step order, then `readback_found`, `max_scan_points`
 * and `max_plan_seconds`; last, for a plan that writes and passes them all,
 * `predicted_effect` (a plan refused already is not predicted). A plan with a
 * refused name is not read further: nothing is asked of the machine about a
 * name that is not one.
 */
export async function preflight(input: Plan, deps: PreflightDeps): Promise<PreflightedPlan> {
  const naming = namingOf(deps);
  const { plan, violations: misnamed } = canonicalPlan(input, naming);
  if (misnamed.length) return refusedNames(plan, misnamed, deps);
  const steps = planSteps(plan);
  const facts = await readFacts(steps, deps);
  const { targets, changes } = walkWrites(steps, facts);
  const violations = inStepOrder(steps, [
    ...noRepeatedWrite(steps),
    ...deviceExists(steps, facts),
    ...currentValueKnown(targets, facts),
    ...valueChecks(targets, facts),
  ]);
  const tolerances: Record<string, number> = {};
  for (const { info } of targets) {
    tolerances[info.device] = tolerance(info, deps.limits.lookup(info.device));
  }
  const written = [...new Set(steps.flatMap(({ action }) => writtenBy(action)))];
  const found = await findReadbacks(
    deps.cs,
    written.filter((d) => facts.info.get(d)?.exists).map((d) => ({
      info: facts.info.get(d) as DeviceInfo,
      limit: deps.limits.lookup(d),
    })),
    deps.readbackTimeoutMs ?? DEFAULT_SETTLE_MS,
    deps.signal,
    naming,
  );
  for (const c of changes) c.readback = found.partners[c.device];
  violations.push(...readbackFound(found.problems, changes));
  const points = countScanPoints(steps);
  const seconds = estimateSeconds(steps);
  violations.push(...maxScanPoints(points, deps.policy), ...maxPlanSeconds(seconds, deps.policy));
  let prediction: Prediction | undefined;
  if (deps.prediction && !isReadOnly(plan) && violations.length === 0) {
    if (!deps.prediction.policy.enabled) {
      prediction = { status: "unavailable", reason: "[prediction] enabled is false" };
    } else {
      prediction = await predictEffect(deps.prediction, {
        plan,
        live: facts.live,
        readbacks: found.partners,
        tolerances,
        limits: deps.limits,
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
      violations.push(...predictedEffectViolations(prediction, deps.prediction.policy));
    }
  }
  return {
    plan,
    hash: await planHash(plan),
    ok: violations.length === 0,
    violations,
    changes,
    readOnly: isReadOnly(plan),
    estimatedSeconds: Math.round(seconds * 10) / 10,
    scanPoints: points,
    tolerances,
    readbacks: found.partners,
    live: facts.live,
    checkedAt: new Date(deps.now()).toISOString(),
    ...(prediction ? { prediction } : {}),
  };
}

/** A plan refused for its names: the violations, and nothing read from the machine. */
async function refusedNames(
  plan: Plan,
  violations: PreflightedPlan["violations"],
  deps: PreflightDeps,
): Promise<PreflightedPlan> {
  const steps = planSteps(plan);
  return {
    plan,
    hash: await planHash(plan),
    ok: false,
    violations,
    changes: [],
    readOnly: isReadOnly(plan),
    estimatedSeconds: Math.round(estimateSeconds(steps) * 10) / 10,
    scanPoints: countScanPoints(steps),
    tolerances: {},
    readbacks: {},
    live: {},
    checkedAt: new Date(deps.now()).toISOString(),
  };
}

/** Describes every device the plan names and reads every device it writes, in one batch each. */
async function readFacts(steps: Step[], deps: PreflightDeps): Promise<Facts> {
  const referenced = [...new Set(steps.flatMap(({ action }) => devicesOf(action)))];
  const written = [...new Set(steps.flatMap(({ action }) => writtenBy(action)))];
  const [infos, readings] = await Promise.all([
    deps.cs.describe(referenced, deps.signal),
    deps.cs.read(written, deps.signal),
  ]);
  const live: Record<string, Value | null> = {};
  for (const r of readings) live[r.device] = r.ok ? r.value : null;
  return {
    info: new Map(infos.map((d) => [d.device, d])),
    live,
    unreadableWhy: new Map(
      readings.filter((r) => !r.ok).map((r) => [r.device, r.error ?? "unreadable"]),
    ),
    limits: deps.limits,
    policy: deps.policy,
  };
}

/** Violations sorted by the step they name (stable: a step's checks keep their order). */
function inStepOrder(steps: Step[], violations: Violation[]): Violation[] {
  const index = new Map(steps.map((s, i) => [s.where, i]));
  return violations
    .map((v, i) => ({ v, i, at: index.get(v.where) ?? steps.length }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ v }) => v);
}
