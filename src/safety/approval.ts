/**
 * Who decides whether a plan runs. A decision is bound to the hash of the
 * exact plan it approves; the executor refuses any other plan. The terminal
 * approver lives in `src/cli`; the ones here never prompt.
 *
 * @module
 */
import type { Plan } from "../plan/model.ts";
import type { PreflightedPlan } from "../plan/preflight.ts";

export type DecisionKind = "approved" | "rejected" | "partial" | "deferred";

export interface Decision {
  decision: DecisionKind;
  /** The plan to execute when approved or partial (a modified or cherry-picked one for partial). */
  plan: Plan;
  /** Hash of `plan`, the one the executor checks. */
  planHash: string;
  /** Who or what decided, for the audit log. */
  decidedBy: string;
  reason?: string;
  /** Deferred: where the plan was saved for later approval. */
  savedPath?: string;
}

export interface ApprovalContext {
  signal: AbortSignal;
  /** Preflights a changed plan (modify / choose) against live values. */
  repreflight(plan: Plan): Promise<PreflightedPlan>;
  /** Saves a plan for later (`plan run FILE --approved-hash H`); returns the path. */
  save(plan: Plan): Promise<string>;
}

export interface Approver {
  /** True when the operator named the plan to run (a hash): no plan runs without that check. */
  readonly explicit?: boolean;
  decide(p: PreflightedPlan, ctx: ApprovalContext): Promise<Decision>;
}

/**
 * No terminal to ask on (pipes, `ask --json`): nothing that writes runs. The
 * plan is saved so an operator can run it with its hash later.
 */
export class DeferringApprover implements Approver {
  async decide(p: PreflightedPlan, ctx: ApprovalContext): Promise<Decision> {
    const savedPath = await ctx.save(p.plan);
    return {
      decision: "deferred",
      plan: p.plan,
      planHash: p.hash,
      decidedBy: "no terminal",
      reason: "approval required but no terminal is available",
      savedPath,
    };
  }
}

/** `plan run FILE --approved-hash H`: approves only the plan whose hash is H. */
export class HashApprover implements Approver {
  readonly explicit = true;
  constructor(readonly approvedHash: string) {}

  decide(p: PreflightedPlan): Promise<Decision> {
    const ok = p.hash === this.approvedHash.toLowerCase();
    return Promise.resolve({
      decision: ok ? "approved" : "rejected",
      plan: p.plan,
      planHash: p.hash,
      decidedBy: "--approved-hash",
      ...(ok ? {} : {
        reason: `--approved-hash ${this.approvedHash.slice(0, 12)}… is not this plan's hash ${
          p.hash.slice(0, 12)
        }…`,
      }),
    });
  }
}

/** Refuses everything (sub-agents, observers). */
export class RefusingApprover implements Approver {
  constructor(readonly why: string) {}
  decide(p: PreflightedPlan): Promise<Decision> {
    return Promise.resolve({
      decision: "rejected",
      plan: p.plan,
      planHash: p.hash,
      decidedBy: "policy",
      reason: this.why,
    });
  }
}
