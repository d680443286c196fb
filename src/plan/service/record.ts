/**
 * The plan service's audit side: the policy in force (every kill switch
 * applied) and one way to append an entry, which turns any failure into the
 * `audit_failed` outcome.
 *
 * @module
 */
import { errorMessage } from "../../util/errors.ts";
import type { AuditRecord, SafetyState } from "../../safety/audit.ts";
import type { Plan } from "../../plan_model/plan.ts";
import type { SafetyPolicy } from "../../plan_model/preflighted.ts";
import type { AuditFailed, PlanServiceDeps } from "./types.ts";

/** The policy with every kill switch applied, and the safety state to record with it. */
export interface InForce {
  policy: SafetyPolicy;
  safety?: SafetyState;
}

/** What an audit entry holds beyond the plan, its hash and the decision (the audit's own fields). */
export type RecordExtra = Pick<
  AuditRecord,
  | "decidedBy"
  | "token"
  | "run"
  | "originals"
  | "status"
  | "results"
  | "restores"
  | "errors"
  | "violations"
>;

export class Recorder {
  constructor(private readonly deps: PlanServiceDeps) {}

  /** The policy with every kill switch applied, and the state to record. */
  async inForce(): Promise<InForce> {
    const safety = await this.deps.safety?.();
    if (!safety || safety.writesEnabled) return { policy: this.deps.policy, safety };
    return {
      policy: {
        ...this.deps.policy,
        writesEnabled: false,
        writesDisabledBy: killSwitchText(safety),
      },
      safety,
    };
  }

  /**
   * Appends an audit entry; the `audit_failed` outcome when it cannot. The
   * entry's hash (its id in the chain) is pushed onto `ids` when given.
   */
  async record(
    force: InForce,
    plan: Plan,
    planHash: string,
    decision: string,
    extra: RecordExtra,
    ids?: string[],
  ): Promise<AuditFailed | undefined> {
    return await this.auditFailure(planHash, decision, async () => {
      const entry = await this.deps.audit.append({
        ...this.deps.identity,
        plan,
        planHash,
        decision,
        ...(force.safety ? { safety: force.safety } : {}),
        ...extra,
      });
      ids?.push(entry.hash);
    });
  }

  /** Runs `append`; the `audit_failed` outcome of `stage` when it throws. */
  async auditFailure(
    planHash: string,
    stage: string,
    append: () => Promise<unknown>,
  ): Promise<AuditFailed | undefined> {
    try {
      await append();
      return undefined;
    } catch (e) {
      const why = errorMessage(e);
      return {
        status: "audit_failed",
        planHash,
        stage,
        error: `cannot write the audit log: ${why}; nothing was written to the machine`,
      };
    }
  }
}

/** Which switch turned writes off, for the preflight message and a stopped plan. */
export function killSwitchText(s: SafetyState): string {
  const site = s.site.filter((x) => !x.writesEnabled);
  if (site.length) {
    return `writes are disabled by the site kill switch (${
      site.map((x) => x.error ? `${x.file}: ${x.error}` : `${x.file}: writes_enabled = false`)
        .join("; ")
    }); a user's config cannot turn it back on`;
  }
  if (s.configError) return `writes are disabled: ${s.configError}`;
  return "writes are disabled by the kill switch ([safety] writes_enabled = false)";
}
