/**
 * Who decides whether a plan runs. A decision is bound to the hash of the
 * exact plan it approves; the executor refuses any other plan. The terminal
 * approver lives in `src/cli`; the ones here never prompt.
 *
 * @module
 */
import type { Plan } from "../plan_model/plan.ts";
import type { PreflightedPlan } from "../plan_model/preflighted.ts";
import type { ApprovalTokens } from "./approval_token.ts";
import { errorMessage } from "../util/errors.ts";

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
  /** Deferred: the saved plan's ID (`accel-agent plan show ID`). */
  planId?: string;
  /** Approved by a token: which one, for the audit log. */
  token?: { id: string; expiresAt?: string; reusable: boolean };
  /**
   * Spends a single-use token: called when the plan starts writing (after
   * its originals are recorded), never before, so a run that fails before
   * its first write leaves the token usable. Resolves to why it cannot be
   * spent (used meanwhile by another run), or undefined once it is.
   */
  spend?(): Promise<string | undefined>;
}

export interface ApprovalContext {
  signal: AbortSignal;
  /** Preflights a changed plan (modify / choose) against live values. */
  repreflight(plan: Plan): Promise<PreflightedPlan>;
  /** Saves a plan for the operator to review later (`plan show ID`); returns the path. */
  save(plan: Plan): Promise<string>;
}

export interface Approver {
  /** True when the operator named the plan to run (a token): no plan runs without that check. */
  readonly explicit?: boolean;
  decide(p: PreflightedPlan, ctx: ApprovalContext): Promise<Decision>;
}

/**
 * No terminal to ask on (pipes, `ask --json`): nothing that writes runs. The
 * plan is saved under an ID so the operator can review it (`plan show ID`),
 * which is where an approval token comes from; none is made here.
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
      planId: planIdOf(savedPath),
    };
  }
}

/** The ID of a plan saved in the plans directory: its file name without `.json`. */
export function planIdOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.json$/, "");
}

/**
 * `plan run PLAN --approved-hash TOKEN`: approves only the plan the token was
 * issued for, while it is valid and unused. A single-use token is recorded
 * as used when the plan starts writing ({@link Decision.spend}), if it has not
 * expired by then; of two runs racing with one token, one writes. A bare plan hash or a token this
 * installation did not issue is rejected.
 */
export class TokenApprover implements Approver {
  readonly explicit = true;
  constructor(readonly token: string, readonly tokens: ApprovalTokens) {}

  async decide(p: PreflightedPlan): Promise<Decision> {
    try {
      return await this.#decide(p);
    } catch (e) {
      // The key or the used-token record cannot be reached: nothing is approved.
      return refusedBy(p, `cannot check the token (${errorMessage(e)})`);
    }
  }

  async #decide(p: PreflightedPlan): Promise<Decision> {
    const rejected = (reason: string) => refusedBy(p, reason);
    const checked = await this.tokens.check(this.token, p.hash);
    if (!checked.ok) return rejected(checked.reason);
    const { claims } = checked;
    const reusable = claims.expiresAt === undefined;
    if (!reusable) {
      const usedAt = await this.tokens.usedAt(claims);
      if (usedAt !== undefined) return rejected(usedText(usedAt));
    }
    const tokens = this.tokens;
    return {
      decision: "approved",
      plan: p.plan,
      planHash: p.hash,
      decidedBy: reusable ? "--approved-hash (reusable procedure)" : "--approved-hash",
      token: {
        id: claims.id,
        ...(claims.expiresAt ? { expiresAt: new Date(claims.expiresAt).toISOString() } : {}),
        reusable,
      },
      ...(reusable ? {} : {
        async spend() {
          // Checked again: the executor's second preflight may have outlasted the token.
          const expiresAt = claims.expiresAt as number;
          if (tokens.now() >= expiresAt) {
            return `the token expired at ${new Date(expiresAt).toISOString()}, before the ` +
              "plan's first write; the operator issues a new one with accel-agent plan show PLAN";
          }
          try {
            const used = await tokens.consume(claims);
            return used.ok ? undefined : usedText(used.usedAt);
          } catch (e) {
            return `the token's use cannot be recorded (${errorMessage(e)})`;
          }
        },
      }),
    };
  }
}

/** Why a used single-use token is refused. */
export function usedText(at: string): string {
  return `the token was already used at ${at}; a token runs its plan once, ` +
    `the operator issues a new one with accel-agent plan show PLAN`;
}

function refusedBy(p: PreflightedPlan, reason: string): Decision {
  return {
    decision: "rejected",
    plan: p.plan,
    planHash: p.hash,
    decidedBy: "--approved-hash",
    reason: `approval refused: ${reason}`,
  };
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
