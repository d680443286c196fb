/**
 * Putting back what an unfinished plan changed: a plan like any other, built
 * from the originals its run journal kept and the machine's live values, and
 * approved by the operator like any other. Each device goes back newest
 * first, in steps no larger than its max_step, with a read between steps.
 *
 * @module
 */
import type { Value } from "../adapters/adapter.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { round6 } from "../util/misc.ts";
import type { Action, Plan } from "../plan_model/plan.ts";
import type { RunMarker } from "./run_journal.ts";

/** The description of a recovery plan names its run, so completing it closes the run. */
export function recoveryDescription(marker: RunMarker): string {
  return `Restore what plan ${marker.planHash.slice(0, 12)} changed before it stopped unfinished ` +
    `(run ${marker.run})`;
}

/** The run a completed plan recovers, when it is a recovery plan. */
export function recoveredRun(plan: Plan): string | undefined {
  return /^Restore what plan [0-9a-f]{12} changed before it stopped unfinished \(run ([0-9a-f-]{36})\)$/
    .exec(plan.description)?.[1];
}

export interface RecoveryPlan {
  /** Undefined when every device already reads its original. */
  plan?: Plan;
  /** Devices left as they are, each with why. */
  skipped: { device: string; why: string }[];
}

/**
 * The plan that brings every device of `marker` back to its original from
 * `live`. A device whose original was unreadable, or that cannot be read
 * now, is skipped and said; one already within `tolerance` needs nothing.
 */
export function buildRecoveryPlan(
  marker: RunMarker,
  live: Map<string, Value | null>,
  limits: LimitsTable,
  tolerance: (device: string) => number,
): RecoveryPlan {
  const actions: Action[] = [];
  const skipped: RecoveryPlan["skipped"] = [];
  const reason = `back to its value before plan ${marker.planHash.slice(0, 12)}`;
  for (const [device, original] of Object.entries(marker.originals).reverse()) {
    const now = live.get(device) ?? null;
    if (original === null) {
      skipped.push({ device, why: "its original could not be read when the plan started" });
      continue;
    }
    if (Array.isArray(original)) {
      skipped.push({ device, why: "a waveform is not restored by a plan" });
      continue;
    }
    if (now === null) {
      skipped.push({ device, why: "it cannot be read now" });
      continue;
    }
    if (typeof original === "boolean") {
      skipped.push({ device, why: "a boolean is not restored by a plan" });
      continue;
    }
    if (typeof original !== "number" || typeof now !== "number") {
      if (now !== original) actions.push({ type: "write", device, value: original, reason });
      continue;
    }
    if (Math.abs(now - original) <= tolerance(device)) continue;
    const maxStep = limits.lookup(device)?.max_step;
    let at = now;
    for (let guard = 0; guard < 1000; guard++) {
      const last = maxStep === undefined || Math.abs(original - at) <= maxStep;
      const next = last ? original : round6(at + Math.sign(original - at) * (maxStep as number));
      if (guard > 0) actions.push({ type: "read", devices: [device], label: "between steps" });
      actions.push({ type: "write", device, value: next, reason });
      if (last) break;
      at = next;
    }
  }
  if (actions.length === 0) return { skipped };
  const devices = [...new Set(actions.flatMap((a) => (a.type === "write" ? [a.device] : [])))];
  actions.push({ type: "read", devices, label: "confirm the originals" });
  return { plan: { description: recoveryDescription(marker), actions }, skipped };
}
