/**
 * Runs an approved decision. The approval is recorded before anything is
 * written, and without that record nothing runs; the originals are
 * recorded (audit and run journal, synced) before the first write; the
 * outcome is recorded after, and the run's journal marker closed.
 *
 * @module
 */
import { errorMessage } from "../../util/errors.ts";
import type { Value } from "../../adapters/adapter.ts";
import type { Decision } from "../../safety/approval.ts";
import { executePlan, type ExecutionResult } from "../executor.ts";
import { recoveredRun } from "../recovery.ts";
import type { OpenRun } from "../run_journal.ts";
import type { InForce, Recorder } from "./record.ts";
import type { PlanEvent, PlanServiceDeps, ProposeOutcome } from "./types.ts";

/** One approved run: what it is, under which policy, and where its records go. */
export interface ApprovedRun {
  deps: PlanServiceDeps;
  recorder: Recorder;
  decision: Decision;
  force: InForce;
  /** Ties the run's records together: started, write-ahead, outcome. */
  run: string;
}

/** Records the start, executes, records the outcome; the proposal's outcome. */
export async function runApproved(
  a: ApprovedRun,
  signal: AbortSignal,
  emit: (ev: PlanEvent) => void,
): Promise<ProposeOutcome> {
  const { decision, force, recorder } = a;
  const common = { decidedBy: decision.decidedBy, token: decision.token, run: a.run };
  // The hashes of the run's audit entries: the logbook draft names them.
  const auditIds: string[] = [];
  const record = (extra: Parameters<Recorder["record"]>[4]) =>
    recorder.record(force, decision.plan, decision.planHash, decision.decision, extra, auditIds);
  const failed = await record({ ...common, status: "started" });
  if (failed) return failed;
  let open: OpenRun | undefined;
  let originals: Record<string, Value | null> | undefined;
  const execution = await executePlan(decision.plan, decision.planHash, {
    ...a.deps,
    policy: force.policy,
    signal,
    onProgress: (p) => emit({ type: "plan_progress", ...p }),
    beforeFirstWrite: async (values) => {
      open = await writeAhead(a, values, auditIds);
      originals = values;
    },
  });
  const after = await record({
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
  await closeRun(open, after === undefined, execution);
  const recovered = execution.status === "completed" ? recoveredRun(decision.plan) : undefined;
  if (recovered) await closeRecovered(a, recovered, execution);
  // A plan that reached the machine leaves a logbook draft, from these results alone.
  if (originals && execution.status !== "refused") {
    try {
      await a.deps.onFinished?.({
        run: a.run,
        plan: decision.plan,
        planHash: decision.planHash,
        decision: decision.decision,
        decidedBy: decision.decidedBy,
        execution,
        originals,
        auditIds,
        recorded: after === undefined,
      });
    } catch (e) {
      execution.errors.push(`no logbook draft was made: ${errorMessage(e)}`);
    }
  }
  return {
    status: execution.status,
    planHash: decision.planHash,
    decision: decision.decision,
    execution,
    recorded: after === undefined,
  };
}

/**
 * Write-ahead: the originals go into the audit and the run journal, synced,
 * before any write. Throws (and so nothing is written) when they cannot.
 */
async function writeAhead(
  a: ApprovedRun,
  originals: Record<string, Value | null>,
  ids: string[],
): Promise<OpenRun | undefined> {
  const { decision } = a;
  const ahead = await a.recorder.record(
    a.force,
    decision.plan,
    decision.planHash,
    decision.decision,
    {
      decidedBy: decision.decidedBy,
      token: decision.token,
      run: a.run,
      status: "write_ahead",
      originals,
    },
    ids,
  );
  if (ahead) throw new Error(ahead.error.replace(/; nothing was written to the machine$/, ""));
  return await a.deps.journal?.begin({
    run: a.run,
    planHash: decision.planHash,
    description: decision.plan.description,
    operator: a.deps.identity.operator,
    host: a.deps.identity.host,
    pid: Deno.pid,
    startedAt: new Date(a.deps.now()).toISOString(),
    originals,
  });
}

/**
 * Ends a run's journal marker: removed when the outcome is in the audit,
 * kept with the outcome when it is not (the next start reports it).
 */
async function closeRun(
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
      `the run journal could not be updated (${errorMessage(e)}); ` +
        "the next start may report this plan as unfinished",
    );
  }
}

/** A recovery plan completed: its unfinished run is closed, and the audit says so. */
async function closeRecovered(
  a: ApprovedRun,
  run: string,
  execution: ExecutionResult,
): Promise<void> {
  const { decision } = a;
  const failed = await a.recorder.record(a.force, decision.plan, decision.planHash, "recovered", {
    decidedBy: decision.decidedBy,
    run,
    status: "recovered",
  });
  if (failed) {
    execution.errors.push(`the recovery could not be recorded: ${failed.error}`);
    return;
  }
  await a.deps.journal?.resolve(run);
}
