/**
 * The whole path of a change: validate → preflight → approval bound to the
 * plan's hash → executor → audit. The `propose_plan` tool and the
 * `plan run` command both go through here; nothing else reaches the executor.
 * Every audit write fails the same way: the outcome is `audit_failed`, and
 * nothing is written to the machine.
 *
 * @module
 */
import type { ControlSystem } from "../adapters/adapter.ts";
import type { Approver, Decision, DecisionKind } from "../safety/approval.ts";
import type { AuditLog, SafetyState } from "../safety/audit.ts";
import type { LimitsTable } from "../safety/limits.ts";
import { executePlan, type ExecutionResult } from "./executor.ts";
import { parsePlan, type Plan, planHash } from "../plan_model/plan.ts";
import { preflight } from "./preflight.ts";
import type { PreflightedPlan, SafetyPolicy, Violation } from "../plan_model/preflighted.ts";
import { savePlan } from "./plan_file.ts";
import { buildRecoveryPlan, recoveredRun } from "./recovery.ts";
import { type OpenRun, type RunJournal, type RunMarker } from "./run_journal.ts";
import { tolerance } from "./preflight.ts";
import type { Timers } from "../util/misc.ts";

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
  | { status: "preflight_failed"; planHash: string; violations: Violation[] }
  | {
    status: "rejected" | "deferred";
    planHash: string;
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
  };

export interface PlanServiceDeps {
  cs: ControlSystem;
  limits: LimitsTable;
  policy: SafetyPolicy;
  audit: AuditLog;
  /**
   * The limits and kill switches in force, read before each proposal (a site
   * switch turned off stops the next plan of a running session). Its
   * `writesEnabled` narrows `policy.writesEnabled`, never widens it.
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
  rollbackTimeoutMs?: number;
  restoreTimeoutMs?: number;
  /**
   * Plans in flight (`<state>/running/`): a marker with the originals is
   * written before the first write and removed once the outcome is recorded.
   */
  journal?: RunJournal;
  /** The clock and timers of waits, dwells and readbacks; tests pass ones that drive a fake clock. */
  timers?: Timers;
}

export class PlanService {
  /** The most recent plan an approver approved (as approved: modified or cherry-picked), for `/save-plan`. */
  lastApproved?: { plan: Plan; planHash: string };

  /** Private: the deps hold the writer, which nothing but the executor may reach. */
  constructor(private readonly deps: PlanServiceDeps) {}

  /** Checks a plan against live values, limits and kill switches, without deciding anything. */
  async check(plan: Plan, signal?: AbortSignal): Promise<PreflightedPlan> {
    const { policy } = await this.#inForce();
    return await preflight(plan, { ...this.deps, policy, signal });
  }

  async propose(
    raw: unknown,
    approver: Approver,
    signal: AbortSignal,
    emit: (ev: PlanEvent) => void = () => {},
  ): Promise<ProposeOutcome> {
    const parsed = parsePlan(raw);
    if (!parsed.ok) return { status: "invalid", errors: parsed.errors };
    const force = await this.#inForce();
    const hash = await planHash(parsed.plan);
    // Nothing is decided (no token used, no operator asked) while the audit cannot record it.
    const unready = await this.#auditFailure(hash, "checked", () => this.deps.audit.ready());
    if (unready) return unready;
    const checked = await preflight(parsed.plan, { ...this.deps, policy: force.policy, signal });
    if (!checked.ok) {
      const failed = await this.#record(force, checked.plan, checked.hash, "preflight_failed", {
        decidedBy: "preflight",
        violations: checked.violations,
      });
      return failed ??
        { status: "preflight_failed", planHash: checked.hash, violations: checked.violations };
    }
    emit({ type: "plan_proposed", plan: checked });
    // An explicit approval (a token given) is always checked, even for a plan without writes.
    const decision = checked.readOnly && this.deps.autoApproveReadOnly && !approver.explicit
      ? readOnlyDecision(checked)
      : await approver.decide(checked, {
        signal,
        repreflight: (p) => preflight(p, { ...this.deps, policy: force.policy, signal }),
        save: (p) => savePlan(this.deps.plansDir, p),
      });
    emit({
      type: "plan_decided",
      planHash: decision.planHash,
      decision: decision.decision,
      reason: decision.reason,
      savedPath: decision.savedPath,
      planId: decision.planId,
    });
    if (decision.decision === "rejected" || decision.decision === "deferred") {
      const failed = await this.#record(
        force,
        decision.plan,
        decision.planHash,
        decision.decision,
        {
          decidedBy: decision.decidedBy,
          token: decision.token,
          errors: decision.reason ? [decision.reason] : undefined,
        },
      );
      return failed ?? {
        status: decision.decision,
        planHash: decision.planHash,
        reason: decision.reason,
        savedPath: decision.savedPath,
        planId: decision.planId,
      };
    }
    return await this.#run(decision, force, signal, emit);
  }

  /**
   * Executes an approved decision. The approval is recorded before anything
   * is written, and without that record nothing runs; the outcome is
   * recorded after.
   */
  async #run(
    decision: Decision,
    force: InForce,
    signal: AbortSignal,
    emit: (ev: PlanEvent) => void,
  ): Promise<ProposeOutcome> {
    this.lastApproved = { plan: decision.plan, planHash: decision.planHash };
    // One id ties the run's records together: started, write-ahead, outcome.
    const run = crypto.randomUUID();
    const common = { decidedBy: decision.decidedBy, token: decision.token, run };
    const failed = await this.#record(force, decision.plan, decision.planHash, decision.decision, {
      ...common,
      status: "started",
    });
    if (failed) return failed;
    let open: OpenRun | undefined;
    const execution = await executePlan(decision.plan, decision.planHash, {
      ...this.deps,
      policy: force.policy,
      signal,
      onProgress: (p) => emit({ type: "plan_progress", ...p }),
      // Write-ahead: the originals are in the audit and in the run journal, synced, before any write.
      beforeFirstWrite: async (originals) => {
        const ahead = await this.#record(
          force,
          decision.plan,
          decision.planHash,
          decision.decision,
          {
            ...common,
            status: "write_ahead",
            originals,
          },
        );
        if (ahead) {
          throw new Error(ahead.error.replace(/; nothing was written to the machine$/, ""));
        }
        open = await this.deps.journal?.begin({
          run,
          planHash: decision.planHash,
          description: decision.plan.description,
          operator: this.deps.identity.operator,
          host: this.deps.identity.host,
          pid: Deno.pid,
          startedAt: new Date(this.deps.now()).toISOString(),
          originals,
        });
      },
    });
    const after = await this.#record(force, decision.plan, decision.planHash, decision.decision, {
      ...common,
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
    // The plan ran; its outcome stays what it was, with the missing record said.
    if (after) {
      execution.errors.push(
        `the outcome could not be recorded: ${
          after.error.replace(/; nothing was written to the machine$/, "")
        }; it is kept in the run journal and reported on the next start`,
      );
    }
    await this.#closeRun(open, after === undefined, execution);
    const recovered = execution.status === "completed" ? recoveredRun(decision.plan) : undefined;
    if (recovered) await this.#closeRecovered(recovered, decision, force, execution);
    return {
      status: execution.status,
      planHash: decision.planHash,
      decision: decision.decision,
      execution,
      recorded: after === undefined,
    };
  }

  /**
   * Ends a run's journal marker: removed when the outcome is in the audit,
   * kept with the outcome when it is not (the next start reports it).
   */
  async #closeRun(
    open: OpenRun | undefined,
    recorded: boolean,
    execution: ExecutionResult,
  ): Promise<void> {
    if (!open) return;
    try {
      if (recorded) await open.end();
      else {
        await open.keep({
          status: execution.status,
          errors: execution.errors,
          restores: execution.restores,
        });
      }
    } catch (e) {
      execution.errors.push(
        `the run journal could not be updated (${(e as Error).message}); ` +
          "the next start may report this plan as unfinished",
      );
    }
  }

  /** A recovery plan completed: its unfinished run is closed, and the audit says so. */
  async #closeRecovered(
    run: string,
    decision: Decision,
    force: InForce,
    execution: ExecutionResult,
  ): Promise<void> {
    const failed = await this.#record(force, decision.plan, decision.planHash, "recovered", {
      decidedBy: decision.decidedBy,
      run,
      status: "recovered",
    });
    if (failed) {
      execution.errors.push(`the recovery could not be recorded: ${failed.error}`);
      return;
    }
    await this.deps.journal?.resolve(run);
  }

  /** Plans that started writing and ended without a recorded outcome (their process died). */
  async unfinished(): Promise<RunMarker[]> {
    return (await this.deps.journal?.unfinished()) ?? [];
  }

  /**
   * The plan that puts back what an unfinished run changed, from the live
   * values now; `plan` is undefined when every device already reads its original.
   */
  async recoveryPlan(marker: RunMarker, signal?: AbortSignal) {
    const devices = Object.keys(marker.originals);
    const [readings, infos] = await Promise.all([
      this.deps.cs.read(devices, signal),
      this.deps.cs.describe(devices, signal),
    ]);
    const live = new Map(readings.map((r) => [r.device, r.ok ? r.value : null]));
    const info = new Map(infos.map((d) => [d.device, d]));
    return buildRecoveryPlan(marker, live, this.deps.limits, (device) => {
      const d = info.get(device);
      return d ? tolerance(d, this.deps.limits.lookup(device)) : 1e-6;
    });
  }

  /** The operator acknowledges an unfinished run without restoring it; the audit records it. */
  async dismiss(marker: RunMarker, decidedBy: string): Promise<AuditFailed | undefined> {
    const force = await this.#inForce();
    const failed = await this.#record(
      force,
      { description: marker.description || "(unknown)", actions: [{ type: "wait", seconds: 0 }] },
      marker.planHash,
      "dismissed",
      { decidedBy, run: marker.run, status: "dismissed", originals: marker.originals },
    );
    if (!failed) await this.deps.journal?.resolve(marker.run);
    return failed;
  }

  /**
   * Records a decision made outside a run: the operator approving a plan as a
   * reusable procedure (`plan show --reusable`), or a token refused before
   * the plan was shown. Undefined when recorded.
   */
  async recordDecision(
    plan: Plan,
    planHash: string,
    decision: "approved_as_procedure" | "rejected",
    extra: { decidedBy: string; token?: unknown; errors?: string[] },
  ): Promise<AuditFailed | undefined> {
    const force = await this.#inForce();
    return await this.#record(force, plan, planHash, decision, {
      ...extra,
      ...(decision === "approved_as_procedure" ? { status: "token_issued" } : {}),
    });
  }

  /** The policy with every kill switch applied, and the state to record. */
  async #inForce(): Promise<InForce> {
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

  /** Appends an audit entry; the `audit_failed` outcome when it cannot. */
  async #record(
    force: InForce,
    plan: Plan,
    planHash: string,
    decision: string,
    extra: {
      decidedBy: string;
      token?: unknown;
      run?: string;
      originals?: unknown;
      status?: string;
      results?: unknown;
      restores?: unknown;
      errors?: string[];
      violations?: unknown;
    },
  ): Promise<AuditFailed | undefined> {
    return await this.#auditFailure(planHash, decision, () =>
      this.deps.audit.append({
        ...this.deps.identity,
        plan,
        planHash,
        decision,
        ...(force.safety ? { safety: force.safety } : {}),
        ...extra,
      }));
  }

  async #auditFailure(
    planHash: string,
    stage: string,
    append: () => Promise<unknown>,
  ): Promise<AuditFailed | undefined> {
    try {
      await append();
      return undefined;
    } catch (e) {
      const why = (e as Error).message;
      return {
        status: "audit_failed",
        planHash,
        stage,
        error: `cannot write the audit log: ${why}; nothing was written to the machine`,
      };
    }
  }
}

export type AuditFailed = Extract<ProposeOutcome, { status: "audit_failed" }>;

interface InForce {
  policy: SafetyPolicy;
  safety?: SafetyState;
}

/** Which switch turned writes off, for the preflight message. */
export function killSwitchText(s: SafetyState): string {
  const site = s.site.filter((x) => !x.writesEnabled);
  if (site.length) {
    return `writes are disabled by the site kill switch (${
      site.map((x) => x.error ? `${x.file}: ${x.error}` : `${x.file}: writes_enabled = false`)
        .join("; ")
    }); a user's config cannot turn it back on`;
  }
  return "writes are disabled by the kill switch ([safety] writes_enabled = false)";
}

function readOnlyDecision(p: PreflightedPlan): Decision {
  return {
    decision: "approved",
    plan: p.plan,
    planHash: p.hash,
    decidedBy: "policy: read-only plan",
  };
}
