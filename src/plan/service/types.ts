/**
 * What the plan service is given, what it reports while a plan runs, and
 * what a proposal comes to.
 *
 * @module
 */
import type { PredictionDeps } from "../preflight_checks/predicted.ts";
import type { Prediction } from "../../plan_model/prediction.ts";
import type { ControlSystem, Value } from "../../adapters/adapter.ts";
import type { Plan } from "../../plan_model/plan.ts";
import type { DecisionKind } from "../../safety/approval.ts";
import type { AuditLog, SafetyState } from "../../safety/audit.ts";
import type { LimitsTable } from "../../safety/limits.ts";
import type { Timers } from "../../util/misc.ts";
import type { PreflightedPlan, SafetyPolicy, Violation } from "../../plan_model/preflighted.ts";
import type { ExecutionResult } from "../executor.ts";
import type { RunJournal } from "../run_journal.ts";

/** What the path reports while it runs; the agent turns these into events. */
export type PlanEvent =
  | { type: "plan_proposed"; plan: PreflightedPlan }
  | {
    type: "plan_decided";
    planHash: string;
    decision: DecisionKind;
    reason?: string;
    savedPath?: string;
    planId?: string;
  }
  | { type: "plan_progress"; step: number; total: number; detail: string };

export type ProposeOutcome =
  | { status: "invalid"; errors: string[] }
  | {
    status: "preflight_failed";
    planHash: string;
    violations: Violation[];
    prediction?: Prediction;
  }
  | {
    status: "rejected" | "deferred";
    planHash: string;
    /** The prediction of the plan decided on, when it is the plan preflight predicted. */
    prediction?: Prediction;
    reason?: string;
    savedPath?: string;
    planId?: string;
  }
  | {
    /** The audit log could not be written: nothing was (or will be) written to the machine. */
    status: "audit_failed";
    planHash: string;
    /** What was being recorded: "preflight_failed", "rejected", "deferred", "approved"… */
    stage: string;
    error: string;
  }
  | {
    status: ExecutionResult["status"];
    planHash: string;
    decision: DecisionKind;
    execution: ExecutionResult;
    /**
     * False when the audit could not take the outcome: the plan ran, but
     * its record is only in the run journal (the next start reports it).
     */
    recorded: boolean;
    /** A recovery plan: whether the run it recovers was verified restored and closed. */
    recovery?: RecoveryOutcome;
  };

/** What a recovery plan came to for the unfinished run it was made for. */
export interface RecoveryOutcome {
  run: string;
  /** True only when every original device read back at its original after the plan. */
  closed: boolean;
  /** Devices not at their originals, each with why (closed false). */
  notRestored?: { device: string; why: string }[];
  /** Why the run stays open (closed false). */
  why?: string;
}

export interface PlanServiceDeps {
  cs: ControlSystem;
  limits: LimitsTable;
  policy: SafetyPolicy;
  audit: AuditLog;
  /**
   * The limits and kill switches in force, read before each proposal, again
   * once a plan is approved, and before every write of a running plan (a
   * switch turned off stops it at its next write). Its `writesEnabled`
   * narrows `policy.writesEnabled`, never widens it. It must be cheap and
   * must not throw: whatever cannot be read counts as off.
   */
  safety?: () => Promise<SafetyState>;
  identity: { operator: string; host: string; configHash: string };
  now(): number;
  /** Where plans awaiting approval are saved. */
  plansDir: string;
  /** Where scan CSVs go. */
  workDir?: string;
  /** Read-only plans run without asking. */
  autoApproveReadOnly: boolean;
  /** Settle time of readbacks whose limits entry gives no `settle_s`. */
  readbackTimeoutMs?: number;
  /** The facility's response model and `[prediction]` policy: preflight's `predicted_effect`. */
  prediction?: PredictionDeps;
  rollbackTimeoutMs?: number;
  restoreTimeoutMs?: number;
  /**
   * Plans in flight (`<state>/running/`): a marker with the originals is
   * written before the first write and removed once the outcome is recorded.
   */
  journal?: RunJournal;
  /** The clock and timers of waits, dwells and readbacks; tests pass ones that drive a fake clock. */
  timers?: Timers;
  /**
   * Told of every plan that reached the machine (its originals were recorded)
   * once its outcome is recorded: the logbook draft is made from this. Must
   * not throw.
   */
  onFinished?: (run: FinishedRun) => Promise<void>;
}

/** A plan that reached the machine, as its run ended: what the logbook draft is made from. */
export interface FinishedRun {
  run: string;
  plan: Plan;
  planHash: string;
  decision: DecisionKind;
  decidedBy: string;
  execution: ExecutionResult;
  /** Every device the plan may write, with its value before the first write. */
  originals: Record<string, Value | null>;
  /** The hashes of the run's audit entries (started, write_ahead, outcome…), in order. */
  auditIds: string[];
  /** False when the audit could not take the outcome. */
  recorded: boolean;
}

export type AuditFailed = Extract<ProposeOutcome, { status: "audit_failed" }>;
