/**
 * The whole path of a change: validate → preflight → approval bound to the
 * plan's hash → executor → audit. The `propose_plan` tool and the
 * `plan run` command both go through here; nothing else reaches the executor.
 *
 * @module
 */
import type { ControlSystem } from "../adapters/adapter.ts";
import type { Approver, Decision, DecisionKind } from "../safety/approval.ts";
import type { AuditLog } from "../safety/audit.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { executePlan, type ExecutionResult, refusal } from "./executor.ts";
import { parsePlan, type Plan } from "./model.ts";
import { preflight, type PreflightedPlan, type SafetyPolicy, type Violation } from "./preflight.ts";
import { savePlan } from "./plan_file.ts";

/** What the path reports while it runs; the agent turns these into events. */
export type PlanEvent =
  | { type: "plan_proposed"; plan: PreflightedPlan }
  | {
    type: "plan_decided";
    planHash: string;
    decision: DecisionKind;
    reason?: string;
    savedPath?: string;
  }
  | { type: "plan_progress"; step: number; total: number; detail: string };

export type ProposeOutcome =
  | { status: "invalid"; errors: string[] }
  | { status: "preflight_failed"; planHash: string; violations: Violation[] }
  | { status: "rejected" | "deferred"; planHash: string; reason?: string; savedPath?: string }
  | {
    status: ExecutionResult["status"];
    planHash: string;
    decision: DecisionKind;
    execution: ExecutionResult;
  };

export interface PlanServiceDeps {
  cs: ControlSystem;
  limits: LimitsTable;
  policy: SafetyPolicy;
  audit: AuditLog;
  identity: { operator: string; host: string; configHash: string };
  now(): number;
  /** Where plans awaiting approval are saved. */
  plansDir: string;
  /** Where scan CSVs go. */
  workDir?: string;
  /** Read-only plans run without asking. */
  autoApproveReadOnly: boolean;
  readbackTimeoutMs?: number;
  rollbackTimeoutMs?: number;
  restoreTimeoutMs?: number;
}

export class PlanService {
  /** The most recent plan an approver approved (as approved: modified or cherry-picked), for `/save-plan`. */
  lastApproved?: { plan: Plan; planHash: string };

  /** Private: the deps hold the writer, which nothing but the executor may reach. */
  constructor(private readonly deps: PlanServiceDeps) {}

  /** Checks a plan against live values and limits, without deciding anything. */
  check(plan: Plan, signal?: AbortSignal): Promise<PreflightedPlan> {
    return preflight(plan, { ...this.deps, signal });
  }

  async propose(
    raw: unknown,
    approver: Approver,
    signal: AbortSignal,
    emit: (ev: PlanEvent) => void = () => {},
  ): Promise<ProposeOutcome> {
    const parsed = parsePlan(raw);
    if (!parsed.ok) return { status: "invalid", errors: parsed.errors };
    const checked = await this.check(parsed.plan, signal);
    if (!checked.ok) {
      await this.#audit(checked.plan, checked.hash, "preflight_failed", "preflight", {
        violations: checked.violations,
      });
      return { status: "preflight_failed", planHash: checked.hash, violations: checked.violations };
    }
    emit({ type: "plan_proposed", plan: checked });
    // An explicit approval (a hash given) is always checked, even for a plan without writes.
    const decision = checked.readOnly && this.deps.autoApproveReadOnly && !approver.explicit
      ? readOnlyDecision(checked)
      : await approver.decide(checked, {
        signal,
        repreflight: (p) => this.check(p, signal),
        save: (p) => savePlan(this.deps.plansDir, p),
      });
    emit({
      type: "plan_decided",
      planHash: decision.planHash,
      decision: decision.decision,
      reason: decision.reason,
      savedPath: decision.savedPath,
    });
    if (decision.decision === "rejected" || decision.decision === "deferred") {
      await this.#audit(decision.plan, decision.planHash, decision.decision, decision.decidedBy, {
        errors: decision.reason ? [decision.reason] : undefined,
      });
      return {
        status: decision.decision,
        planHash: decision.planHash,
        reason: decision.reason,
        savedPath: decision.savedPath,
      };
    }
    return await this.run(decision, signal, emit);
  }

  /**
   * Executes an approved decision. The approval is recorded before anything
   * is written, and without that record nothing runs; the outcome is
   * recorded after.
   */
  async run(
    decision: Decision,
    signal: AbortSignal,
    emit: (ev: PlanEvent) => void = () => {},
  ): Promise<ProposeOutcome> {
    this.lastApproved = { plan: decision.plan, planHash: decision.planHash };
    try {
      await this.#audit(decision.plan, decision.planHash, decision.decision, decision.decidedBy, {
        status: "started",
      });
    } catch (e) {
      const at = new Date(this.deps.now()).toISOString();
      const why = `cannot write the audit log (${(e as Error).message}); nothing was written`;
      const execution = refusal(decision.planHash, [why], at, this.deps.now);
      return {
        status: "refused",
        planHash: decision.planHash,
        decision: decision.decision,
        execution,
      };
    }
    const execution = await executePlan(decision.plan, decision.planHash, {
      ...this.deps,
      signal,
      onProgress: (p) => emit({ type: "plan_progress", ...p }),
    });
    try {
      await this.#audit(decision.plan, decision.planHash, decision.decision, decision.decidedBy, {
        status: execution.status,
        results: {
          actions: execution.results,
          rollback: execution.rollback,
          csvFiles: execution.csvFiles,
        },
        restores: execution.restores,
        errors: execution.errors.length ? execution.errors : undefined,
        violations: execution.violations.length ? execution.violations : undefined,
      });
    } catch (e) {
      execution.errors.push(
        `the outcome could not be written to the audit log: ${(e as Error).message}`,
      );
    }
    return {
      status: execution.status,
      planHash: decision.planHash,
      decision: decision.decision,
      execution,
    };
  }

  async #audit(
    plan: Plan,
    planHash: string,
    decision: string,
    decidedBy: string,
    extra: {
      status?: string;
      results?: unknown;
      restores?: unknown;
      errors?: string[];
      violations?: unknown;
    },
  ): Promise<void> {
    await this.deps.audit.append({
      ...this.deps.identity,
      plan,
      planHash,
      decision,
      decidedBy,
      ...extra,
    });
  }
}

function readOnlyDecision(p: PreflightedPlan): Decision {
  return {
    decision: "approved",
    plan: p.plan,
    planHash: p.hash,
    decidedBy: "policy: read-only plan",
  };
}
