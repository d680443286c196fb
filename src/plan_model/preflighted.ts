/**
 * What preflight says about a plan: the violations, the changes it would
 * make and how each is confirmed. These are the types the approvers, the
 * profiles and the terminal read; preflight itself lives in `src/plan`.
 *
 * @module
 */
import type { Value } from "../adapters/adapter.ts";
import type { Plan } from "./plan.ts";
import type { Prediction } from "./prediction.ts";

/** The `[safety]` settings preflight holds a plan to. */
export interface SafetyPolicy {
  /** The kill switch: false refuses every write. */
  writesEnabled: boolean;
  /** What turned writes off, when not the config's `writes_enabled` (a site kill switch). */
  writesDisabledBy?: string;
  maxScanPoints: number;
  maxPlanSeconds: number;
  /** Where the limits came from, for messages. */
  limitsSource: string;
}

/**
 * Every preflight check, in the order it runs, and what it holds a plan to.
 * A violation names the check that found it.
 */
export const PREFLIGHT_CHECKS = {
  device_name: "every device is named as the control system writes it (an alias is refused)",
  no_repeated_write: "a device is not written twice with no read, wait or scan between",
  device_exists: "every device the plan names exists",
  current_value_known: "a device with a max_step that the plan writes can be read now",
  writes_enabled: "the kill switch allows writes",
  writable: "the device itself accepts writes",
  has_limits: "the limits file has an entry for the device that allows writing",
  value_type: "the value is of the device's type (a finite number, or a string)",
  limits_complete: "the limits entry bounds the value (min, max and max_step, or values)",
  within_limits: "the value is within min and max, or one of the allowed values",
  max_step: "the step from the device's value before the write is at most max_step",
  readback_found: "a readback device named by the limits or the catalogue can be read",
  max_scan_points: "the plan's scans have at most [safety] max_scan_points points",
  max_plan_seconds: "the plan takes at most [safety] max_plan_seconds",
  predicted_effect:
    "the plan's predicted effect on the watched devices stays below [prediction] refuse_at " +
    "and keeps the beam (and, when [prediction] required, can be predicted)",
} as const;

/** The name of one preflight check. */
export type PreflightCheck = keyof typeof PREFLIGHT_CHECKS;

/** One reason a plan may not run. */
export interface Violation {
  /** "actions[2]", "rollback[0]" or "plan". */
  where: string;
  device?: string;
  message: string;
  /** The check that refused (e.g. `within_limits`, `max_step`). */
  check: PreflightCheck;
}

/** The device that confirms writes to one device, and how long it may take. */
export interface ReadbackPartner {
  /** The device read after a write; null when there is none (the setpoint is read back instead). */
  device: string | null;
  /** True when `device` is the written device's own read value (a TANGO read-write attribute). */
  readValue: boolean;
  /** Where the partner came from. */
  source: "limits" | "catalogue" | "convention" | "none";
  /** How long the readback may take to come within tolerance, in ms. */
  settleMs: number;
}

/** One change the plan makes, for the approval table: current → new (Δ). */
export interface PlannedChange {
  where: string;
  kind: "write" | "scan";
  device: string;
  units: string;
  /** The device's value before this change (live, or what the plan set before). */
  from: Value | null;
  /** Write: the value; scan: the last point. */
  to: number | string;
  delta?: number;
  reason?: string;
  /** Scan only. */
  points?: number;
  first?: number;
  rollback: boolean;
  /** The device whose reading confirms this change; null when it has none (see {@link ReadbackPartner}). */
  readback?: ReadbackPartner;
}

/** A plan as preflight checked it against the live machine and the limits. */
export interface PreflightedPlan {
  plan: Plan;
  hash: string;
  ok: boolean;
  violations: Violation[];
  changes: PlannedChange[];
  readOnly: boolean;
  estimatedSeconds: number;
  scanPoints: number;
  /** Readback tolerance of every device the plan writes. */
  tolerances: Record<string, number>;
  /** The readback partner of every device the plan writes that exists. */
  readbacks: Record<string, ReadbackPartner>;
  /** Live values of written devices when checked. */
  live: Record<string, Value | null>;
  checkedAt: string;
  /** What the plan is predicted to do to the beam (absent: no writes, or refused before it was predicted). */
  prediction?: Prediction;
}

/** A violation in one line: where, what, and the check that refused, e.g. `actions[0]: … [max_step]`. */
export function violationText(v: Violation): string {
  return `${v.where}: ${v.message} [${v.check}]`;
}
