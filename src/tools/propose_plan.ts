/**
 * `propose_plan`: the model's only path to a change on the machine. The plan
 * is preflighted, shown to the operator, and runs only when approved; the
 * result tells the model exactly what happened.
 *
 * @module
 */
import { normalisePlanInput, Plan } from "../plan_model/plan.ts";
import { violationText } from "../plan_model/preflighted.ts";
import type { ProposeOutcome } from "../plan/service.ts";
import type { ActionResult, Confirmation, ExecutionResult, Restore } from "../plan/executor.ts";
import type { Value } from "../adapters/adapter.ts";
import type { DecisionKind } from "../safety/approval.ts";
import { defineTool, ToolError } from "./define.ts";

const DESCRIPTION =
  `Propose a change to the machine as a plan. It is checked against safety limits and live values, \
shown to the operator, and runs only if they approve it; every write waits for its readback device (e.g. X:RDBK) \
to come within tolerance (a device without one has only its setpoint read back), and if anything fails, what \
was changed is restored. This is the ONLY way to change anything.

Actions, run in order:
- {"type":"read","devices":[...],"label":"..."}: read devices (one batch)
- {"type":"write","device":"X:SETPT","value":0.5,"reason":"..."}: set one device (absolute value, device units)
- {"type":"wait","seconds":2,"reason":"..."}: let the machine settle
- {"type":"scan","writeDevice":"X:SETPT","start":-1,"stop":1,"steps":11,"readDevices":[...],"dwellSeconds":1}: \
step a device through evenly spaced setpoints, reading devices at each (data saved as CSV)

Compose them: write then observe (write, wait, read); a batch change (several writes, then wait, read); a scan \
(read, scan); a multi-step procedure with restore (read originals, writes with waits, reads, and a "rollback" list \
that puts values back when the plan ends). Values are absolute: read the current value first and add the change. \
Each write may move a device at most its max_step from its current value; split larger moves into steps with waits \
between. Without a rollback, a failed or aborted plan restores every written device to its original value.`;

/** A write's check as the model reads it (see `confirmationJson`). */
export interface ConfirmationJson {
  status: Confirmation["status"];
  readback_device: string | null;
  read_value?: true;
  readback: Value | null;
}

/** One action of a plan that ran, as the model reads it. */
export interface ActionJson {
  where: string;
  detail: string;
  /** Present (false) on an action that stopped before it ended. */
  ok?: false;
  /** An action that stopped: every value it sent to the wire, confirmed or not. */
  written?: Value[];
  readings?: ActionResult["readings"];
  confirmation?: ConfirmationJson;
}

/** What `propose_plan` returns, by `status`: what happened, and that nothing else did. */
export type ProposePlanResult =
  | { status: "invalid"; errors: string[]; note: string }
  | { status: "preflight_failed"; plan_hash: string; violations: string[]; note: string }
  | { status: "rejected"; plan_hash: string; reason: string | undefined; note: string }
  | { status: "approval_required"; plan_hash: string; plan_id?: string; note: string }
  | { status: "audit_failed"; plan_hash: string; errors: string[]; note: string }
  | {
    status: ExecutionResult["status"];
    aborted_by?: ExecutionResult["abortedBy"];
    decision: DecisionKind;
    plan_hash: string;
    actions: ActionJson[];
    rollback?: string[];
    restored?: Restore[];
    errors?: string[];
    violations?: string[];
    csv_files?: string[];
    csv_files_in_python?: (string | undefined)[];
    /** False when the audit could not record the outcome (then `note` says so). */
    recorded: boolean;
    /** A recovery plan: whether the run it recovers is closed (verified at its originals). */
    recovery?: { run: string; closed: boolean; why?: string };
    note?: string;
  };

export const proposePlan = defineTool<typeof Plan, ProposePlanResult>({
  name: "propose_plan",
  description: DESCRIPTION,
  parameters: Plan,
  normalise: normalisePlanInput,
  readOnly: false,
  awaitsCompletion: true,
  // Readings (values, units, enum labels) and the services' own error messages come back in it.
  outsideText: "facility services (the readings of the plan's devices, and errors)",
  async execute(plan, { plans, signal, emit }) {
    if (!plans) {
      throw new ToolError(
        "plans cannot be proposed here; no write path is available to this agent",
      );
    }
    return forModel(
      await plans.service.propose(plan, plans.approver, signal, emit),
      plans.sandboxPath,
    );
  },
});

/**
 * A write's check as JSON: `status` "confirmed" (its readback device came
 * within tolerance) or "accepted" (setpoint accepted, no readback device).
 */
function confirmationJson(c: Confirmation): ConfirmationJson {
  return {
    status: c.status,
    readback_device: c.readbackDevice,
    ...(c.readValue ? { read_value: true } : {}),
    readback: c.readback,
  };
}

/** What the model reads: what happened, and that nothing else did. */
export function forModel(
  o: ProposeOutcome,
  sandboxPath: (hostPath: string) => string | undefined = () => undefined,
): ProposePlanResult {
  switch (o.status) {
    case "invalid":
      return {
        status: "invalid",
        errors: o.errors,
        note: "Nothing was written. Fix the plan and propose again.",
      };
    case "preflight_failed":
      return {
        status: "preflight_failed",
        plan_hash: o.planHash,
        violations: o.violations.map(violationText),
        note:
          "Nothing was written. Correct every violation and propose again, or tell the operator why not.",
      };
    case "rejected":
      return {
        status: "rejected",
        plan_hash: o.planHash,
        reason: o.reason,
        note: "Nothing was written.",
      };
    case "deferred":
      // Never a token or a command that runs the plan: approval is the operator's own act.
      return {
        status: "approval_required",
        plan_hash: o.planHash,
        ...(o.planId ? { plan_id: o.planId } : {}),
        note: "No operator terminal is available, so nothing was written. The plan is saved" +
          (o.planId
            ? ` as ${o.planId}; the operator reviews it with: accel-agent plan show ${o.planId}`
            : "; the operator reviews it with accel-agent plan show") +
          ". Only the operator can approve it; tell them the plan ID.",
      };
    case "audit_failed":
      return {
        status: "audit_failed",
        plan_hash: o.planHash,
        errors: [o.error],
        note: "Nothing was written: no change runs while the audit log cannot record it. " +
          "Tell the operator.",
      };
    default: {
      const e = o.execution;
      return {
        status: e.status,
        ...(e.abortedBy ? { aborted_by: e.abortedBy } : {}),
        decision: o.decision,
        plan_hash: o.planHash,
        actions: e.results.map((r) => ({
          where: r.where,
          detail: r.detail,
          ...(r.ok ? {} : { ok: false as const }),
          ...(r.written ? { written: r.written } : {}),
          ...(r.readings ? { readings: r.readings } : {}),
          ...(r.confirmation ? { confirmation: confirmationJson(r.confirmation) } : {}),
        })),
        ...(e.rollback.length
          ? { rollback: e.rollback.map((r) => `${r.where}: ${r.detail}`) }
          : {}),
        ...(e.restores.length ? { restored: e.restores } : {}),
        ...(e.errors.length ? { errors: e.errors } : {}),
        ...(e.violations.length ? { violations: e.violations.map(violationText) } : {}),
        ...(e.csvFiles.length ? { csv_files: e.csvFiles } : {}),
        ...(e.csvFiles.some((f) => sandboxPath(f))
          ? { csv_files_in_python: e.csvFiles.map((f) => sandboxPath(f)) }
          : {}),
        recorded: o.recorded,
        ...(o.recovery
          ? {
            recovery: {
              run: o.recovery.run,
              closed: o.recovery.closed,
              ...(o.recovery.why ? { why: o.recovery.why } : {}),
            },
          }
          : {}),
        ...(o.recorded ? {} : {
          note: "The plan ran, but the audit log could not record its outcome (see errors). " +
            "Tell the operator.",
        }),
      };
    }
  }
}
