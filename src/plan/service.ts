/**
 * The whole path of a change: validate → preflight → approval bound to the
 * plan's hash → executor → audit. The `propose_plan` tool and the
 * `plan run` command both go through here; nothing else reaches the executor.
 * Every audit write fails the same way: the outcome is `audit_failed`, and
 * nothing is written to the machine.
 *
 * @module
 */
import type { Approver, Decision } from "../safety/approval.ts";
import { parsePlan, type Plan, planHash } from "../plan_model/plan.ts";
import type { PreflightedPlan } from "../plan_model/preflighted.ts";
import { namingOf, preflight } from "./preflight.ts";
import { canonicalPlan } from "./preflight_checks/names.ts";
import type { Value } from "../adapters/adapter.ts";
import { savePlan } from "./plan_file.ts";
import { buildRecoveryPlan, type CheckedRun, checkRun } from "./recovery.ts";
import type { RecoveryPlan } from "./recovery.ts";
import { isRunId } from "./run_journal.ts";
import { notAtOriginals, tolerancesOf } from "./service/verify.ts";
import { Recorder } from "./service/record.ts";
import { runApproved } from "./service/run.ts";
import type { AuditFailed, PlanEvent, PlanServiceDeps, ProposeOutcome } from "./service/types.ts";

export type {
  AuditFailed,
  FinishedRun,
  PlanEvent,
  PlanServiceDeps,
  ProposeOutcome,
} from "./service/types.ts";
export { killSwitchText } from "./service/record.ts";

export class PlanService {
  /** The most recent plan an approver approved (as approved: modified or cherry-picked), for `/save-plan`. */
  lastApproved?: { plan: Plan; planHash: string };

  readonly #recorder: Recorder;

  /** Private: the deps hold the writer, which nothing but the executor may reach. */
  constructor(private readonly deps: PlanServiceDeps) {
    this.#recorder = new Recorder(deps);
  }

  /** Checks a plan against live values, limits and kill switches, without deciding anything. */
  async check(plan: Plan, signal?: AbortSignal): Promise<PreflightedPlan> {
    const { policy } = await this.#recorder.inForce();
    return await preflight(plan, { ...this.deps, policy, signal });
  }

  /**
   * The hash `plan` is approved and run under: its canonical form's (every
   * alias written as the control system names the device), as preflight
   * and `plan show` give it.
   */
  async hashOf(plan: Plan): Promise<string> {
    return await planHash(canonicalPlan(plan, namingOf(this.deps)).plan);
  }

  async propose(
    raw: unknown,
    approver: Approver,
    signal: AbortSignal,
    emit: (ev: PlanEvent) => void = () => {},
  ): Promise<ProposeOutcome> {
    const parsed = parsePlan(raw);
    if (!parsed.ok) return { status: "invalid", errors: parsed.errors };
    const force = await this.#recorder.inForce();
    const hash = await this.hashOf(parsed.plan);
    // Nothing is decided (no token used, no operator asked) while the audit cannot record it.
    const unready = await this.#recorder.auditFailure(
      hash,
      "checked",
      () => this.deps.audit.ready(),
    );
    if (unready) return unready;
    const checked = await preflight(parsed.plan, { ...this.deps, policy: force.policy, signal });
    if (!checked.ok) {
      const failed = await this.#recorder.record(
        force,
        checked.plan,
        checked.hash,
        "preflight_failed",
        {
          decidedBy: "preflight",
          violations: checked.violations,
        },
      );
      return failed ?? {
        status: "preflight_failed",
        planHash: checked.hash,
        violations: checked.violations,
        ...(checked.prediction ? { prediction: checked.prediction } : {}),
      };
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
      return await this.#declined(force, { ...decision, decision: decision.decision }, checked);
    }
    this.lastApproved = { plan: decision.plan, planHash: decision.planHash };
    // The switches again: the operator may have sat at the prompt while one was turned off.
    const now = await this.#recorder.inForce();
    const recovers = await this.deps.journal?.recoveryFor(checked.hash);
    const approved = { deps: this.deps, recorder: this.#recorder, decision, force: now };
    return await runApproved(
      { ...approved, run: crypto.randomUUID(), ...(recovers ? { recovers } : {}) },
      signal,
      emit,
    );
  }

  /** A plan the approver rejected or deferred: recorded, with the prediction of the plan decided on. */
  async #declined(
    force: Awaited<ReturnType<Recorder["inForce"]>>,
    decision: Decision & { decision: "rejected" | "deferred" },
    checked: PreflightedPlan,
  ): Promise<ProposeOutcome> {
    const failed = await this.#recorder.record(
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
      ...(checked.prediction && decision.planHash === checked.hash
        ? { prediction: checked.prediction }
        : {}),
    };
  }

  /**
   * Plans that started writing and ended without a recorded outcome (their
   * process died) or with devices not restored, each checked against the
   * audit's write-ahead record of its run.
   */
  async unfinished(): Promise<CheckedRun[]> {
    const markers = (await this.deps.journal?.unfinished()) ?? [];
    return await Promise.all(markers.map((m) => checkRun(m, this.deps.audit)));
  }

  /**
   * The plan that puts back what an unfinished run changed, from the live
   * values now, bound to the run by its hash in the run journal; `plan` is
   * undefined when nothing can or needs to be written.
   */
  async recoveryPlan(
    run: CheckedRun & { originals: Record<string, Value | null> },
    signal?: AbortSignal,
  ): Promise<RecoveryPlan> {
    const devices = Object.keys(run.originals);
    const [readings, tolerance] = await Promise.all([
      this.deps.cs.read(devices, signal),
      tolerancesOf(this.deps.cs, this.deps.limits, devices, signal),
    ]);
    const live = new Map(readings.map((r) => [r.device, r.ok ? r.value : null]));
    const built = buildRecoveryPlan(run.marker, run.originals, live, this.deps.limits, tolerance);
    if (built.plan) {
      await this.deps.journal?.bindRecovery(run.marker.run, await planHash(built.plan));
    }
    return built;
  }

  /**
   * Closes a run whose every original device reads its original now
   * (recorded as `recovered`); otherwise says which do not, and it stays open.
   */
  async closeIfRestored(
    run: CheckedRun & { originals: Record<string, Value | null> },
    signal?: AbortSignal,
  ): Promise<{ closed: true } | { closed: false; left: { device: string; why: string }[] }> {
    const devices = Object.keys(run.originals);
    const left = await notAtOriginals(this.deps.cs, this.deps.limits, run.originals, signal);
    if (left.length) return { closed: false, left };
    const failed = await this.#close(
      run,
      "recovered",
      "plan recover: every device reads its original",
      {
        status: "already_restored",
        results: { verified: devices },
      },
    );
    if (failed) throw new Error(failed.error);
    return { closed: true };
  }

  /** The operator acknowledges an unfinished run without restoring it; the audit records it. */
  async dismiss(run: CheckedRun, decidedBy: string): Promise<AuditFailed | undefined> {
    return await this.#close(run, "dismissed", decidedBy, {
      status: "dismissed",
      originals: run.originals ?? run.marker.originals,
      ...(run.problem ? { errors: [run.problem] } : {}),
    });
  }

  async #close(
    run: CheckedRun,
    decision: string,
    decidedBy: string,
    extra: { status: string; originals?: unknown; results?: unknown; errors?: string[] },
  ): Promise<AuditFailed | undefined> {
    const { marker } = run;
    // Validated before anything is recorded: a name that is not a run id closes nothing.
    if (!isRunId(marker.run)) throw new RangeError(`${marker.run} is not a run id`);
    const force = await this.#recorder.inForce();
    const failed = await this.#recorder.record(
      force,
      { description: marker.description || "(unknown)", actions: [{ type: "wait", seconds: 0 }] },
      marker.planHash || "0".repeat(64),
      decision,
      { decidedBy, run: marker.run, ...extra },
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
    const force = await this.#recorder.inForce();
    return await this.#recorder.record(force, plan, planHash, decision, {
      ...extra,
      ...(decision === "approved_as_procedure" ? { status: "token_issued" } : {}),
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
