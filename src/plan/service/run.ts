/**
 * Runs an approved decision. The approval is recorded before anything is
 * written, and without that record nothing runs; the originals are
 * recorded (audit and run journal, synced) before the first write, and a
 * single-use token is spent only then, so a run that fails before writing
 * leaves it usable; the outcome is recorded after, and the run's journal
 * marker closed — only when the plan completed or every device it wrote
 * was restored. The kill switches are asked again before every write.
 *
 * A plan bound to an unfinished run (a recovery, `recovery.ts`) holds that
 * run's marker instead of writing one of its own, puts nothing back when it
 * stops, and closes the run only when every original device, read
 * afterwards, is at its original.
 *
 * @module
 */
import { errorMessage } from "../../util/errors.ts";
import { timeoutSignal } from "../../util/misc.ts";
import type { Value } from "../../adapters/adapter.ts";
import type { Decision } from "../../safety/approval.ts";
import type { SafetyState } from "../../safety/audit.ts";
import { executePlan, type ExecutionResult, NotStarted, refusal } from "../executor.ts";
import { checkRun } from "../recovery.ts";
import type { OpenRun } from "../run_journal.ts";
import { type InForce, killSwitchText, type Recorder } from "./record.ts";
import { notAtOriginals } from "./verify.ts";
import type { PlanEvent, PlanServiceDeps, ProposeOutcome, RecoveryOutcome } from "./types.ts";

/** One approved run: what it is, under which policy, and where its records go. */
export interface ApprovedRun {
  deps: PlanServiceDeps;
  recorder: Recorder;
  decision: Decision;
  force: InForce;
  /** Ties the run's records together: started, write-ahead, outcome. */
  run: string;
  /** The unfinished run this plan was made to recover (bound by its hash in the run journal). */
  recovers?: string;
}

type Executed = Extract<ProposeOutcome, { execution: ExecutionResult }>;

/** Records the start, executes, records the outcome; the proposal's outcome. */
export async function runApproved(
  a: ApprovedRun,
  signal: AbortSignal,
  emit: (ev: PlanEvent) => void,
): Promise<ProposeOutcome> {
  if (!a.recovers) return await runRecorded(a, signal, emit);
  // A recovery holds the first run's marker while it runs, and takes that run's originals from the audit.
  let held;
  try {
    held = await a.deps.journal?.adopt(a.recovers);
  } catch (e) {
    return await refuse(a, `cannot recover run ${a.recovers}: ${errorMessage(e)}`);
  }
  if (!held) return await refuse(a, "no run journal to recover a run from");
  try {
    const checked = await checkRun(held.marker, a.deps.audit);
    if (checked.problem !== undefined || !checked.originals) {
      return await refuse(a, `cannot recover run ${a.recovers}: ${checked.problem}`);
    }
    return await runRecorded(a, signal, emit, checked.originals);
  } finally {
    held.release();
  }
}

/**
 * The run itself. `firstOriginals`: the originals of the run a recovery
 * recovers, which it is verified against.
 */
async function runRecorded(
  a: ApprovedRun,
  signal: AbortSignal,
  emit: (ev: PlanEvent) => void,
  firstOriginals?: Record<string, Value | null>,
): Promise<ProposeOutcome> {
  const { decision, recorder } = a;
  const common = {
    decidedBy: decision.decidedBy,
    token: decision.token,
    run: a.run,
    ...(a.recovers ? { recovers: a.recovers } : {}),
  };
  // The state of the switches the last write was checked under: what the outcome records.
  let latest: SafetyState | undefined;
  const force = () => (latest ? { ...a.force, safety: latest } : a.force);
  // The hashes of the run's audit entries: the logbook draft names them.
  const auditIds: string[] = [];
  const record = (extra: Parameters<Recorder["record"]>[4]) =>
    recorder.record(force(), decision.plan, decision.planHash, decision.decision, extra, auditIds);
  const failed = await record({ ...common, status: "started" });
  if (failed) return { ...failed, error: failed.error + unspent(decision) };
  let open: OpenRun | undefined;
  let spent = false;
  let originals: Record<string, Value | null> | undefined;
  const execution = await executePlan(decision.plan, decision.planHash, {
    ...a.deps,
    policy: a.force.policy,
    signal,
    onProgress: (p) => emit({ type: "plan_progress", ...p }),
    beforeFirstWrite: async (values) => {
      open = await writeAhead(a, values, auditIds);
      originals = values;
      const refused = await decision.spend?.();
      if (refused !== undefined) throw new NotStarted(`approval refused: ${refused}`);
      spent = decision.spend !== undefined;
    },
    ...(a.deps.safety ? { killSwitch: liveSwitch(a, (s) => (latest = s)) } : {}),
    ...(a.recovers ? { restoreOnStop: false } : {}),
  });
  explainStop(a, execution, spent);
  const left = open ? notRestoredBy(a.run, execution) : false;
  const after = await record({ ...common, ...outcomeRecord(execution) });
  // The plan ran; its outcome stays what it was, with the missing record said.
  if (after) {
    execution.errors.push(
      `the outcome could not be recorded: ${
        after.error.replace(/; nothing was written to the machine$/, "")
      }; it is kept in the run journal and reported on the next start`,
    );
  }
  await closeRun(open, after === undefined, !left, execution);
  const outcome: Executed = {
    status: execution.status,
    planHash: decision.planHash,
    decision: decision.decision,
    execution,
    recorded: after === undefined,
  };
  if (a.recovers && firstOriginals) {
    outcome.recovery = await closeRecovered(a, a.recovers, firstOriginals, execution, force());
  }
  if (originals && execution.status !== "refused") {
    await leaveDraft(a, execution, originals, auditIds, after === undefined);
  }
  return outcome;
}

/** Says what a stop left: a token not spent, a recovery that put nothing back. */
function explainStop(a: ApprovedRun, execution: ExecutionResult, spent: boolean): void {
  const { decision } = a;
  if (!spent && decision.token && !decision.token.reusable && execution.status === "refused") {
    execution.errors.push(unspent(decision).slice(2));
  }
  if (a.recovers && execution.status !== "completed" && execution.status !== "refused") {
    execution.errors.push(
      `a recovery puts nothing back when it stops (what it found were the values run ${a.recovers} ` +
        "left); that run stays open with its own originals",
    );
  }
}

/** What the audit's outcome record holds of an execution. */
function outcomeRecord(execution: ExecutionResult) {
  return {
    status: execution.status,
    results: {
      actions: execution.results,
      rollback: execution.rollback,
      csvFiles: execution.csvFiles,
      ...(execution.abortedBy ? { abortedBy: execution.abortedBy } : {}),
      // The prediction and what was observed against it: how good the facility's model is.
      ...(execution.prediction ? { prediction: execution.prediction } : {}),
      ...(execution.observed ? { observed: execution.observed } : {}),
    },
    restores: execution.restores,
    errors: execution.errors.length ? execution.errors : undefined,
    violations: execution.violations.length ? execution.violations : undefined,
  };
}

/** A plan that reached the machine leaves a logbook draft, from these results alone. */
async function leaveDraft(
  a: ApprovedRun,
  execution: ExecutionResult,
  originals: Record<string, Value | null>,
  auditIds: string[],
  recorded: boolean,
): Promise<void> {
  const { decision } = a;
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
      recorded,
    });
  } catch (e) {
    execution.errors.push(`no logbook draft was made: ${errorMessage(e)}`);
  }
}

/** The kill switches as the writer asks them: why writes are off now, or undefined. */
function liveSwitch(
  a: ApprovedRun,
  seen: (s: SafetyState) => void,
): () => Promise<string | undefined> {
  return async () => {
    const state = await (a.deps.safety as () => Promise<SafetyState>)();
    seen(state);
    if (state.writesEnabled && a.force.policy.writesEnabled) return undefined;
    return killSwitchText(state);
  };
}

/** The words that say a single-use token was not spent (empty for any other decision). */
function unspent(decision: Decision): string {
  const t = decision.token;
  if (!t || t.reusable) return "";
  return `; the approval token was not spent: it can run this plan ${
    t.expiresAt ? `until ${t.expiresAt}` : "again"
  }`;
}

/** A run refused before anything was recorded of it: recorded now, nothing written. */
async function refuse(a: ApprovedRun, why: string): Promise<ProposeOutcome> {
  const { decision } = a;
  const errors = [`${why}; nothing was written${unspent(decision)}`];
  const failed = await a.recorder.record(a.force, decision.plan, decision.planHash, "refused", {
    decidedBy: decision.decidedBy,
    token: decision.token,
    run: a.run,
    ...(a.recovers ? { recovers: a.recovers } : {}),
    status: "refused",
    errors,
  });
  if (failed) return failed;
  const now = a.deps.now;
  return {
    status: "refused",
    planHash: decision.planHash,
    decision: decision.decision,
    execution: refusal(decision.planHash, errors, new Date(now()).toISOString(), now),
    recorded: true,
  };
}

/**
 * Write-ahead: the originals go into the audit and the run journal, synced,
 * before any write. Throws (and so nothing is written) when they cannot. A
 * recovery writes no marker: it holds the first run's.
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
      ...(a.recovers ? { recovers: a.recovers } : {}),
      status: "write_ahead",
      originals,
    },
    ids,
  );
  if (ahead) throw new Error(ahead.error.replace(/; nothing was written to the machine$/, ""));
  if (a.recovers) return undefined;
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
 * Whether a plan that did not complete left a device it wrote off its
 * original (a restore that failed); if so, says so in its errors.
 */
function notRestoredBy(run: string, execution: ExecutionResult): boolean {
  const left = execution.status === "completed" ? [] : execution.restores.filter((r) => !r.ok);
  if (left.length) {
    execution.errors.push(
      `not every device the plan wrote is back at its original (${
        left.map((r) => `${r.device}: ${r.error ?? "not restored"}`).join("; ")
      }); the run stays open: accel-agent plan recover ${run}`,
    );
  }
  return left.length > 0;
}

/**
 * Ends a run's journal marker: removed when the outcome is in the audit and
 * the plan completed, wrote nothing, or had every device it wrote restored
 * (`restored`); kept with the outcome otherwise (the next start reports it).
 */
async function closeRun(
  open: OpenRun | undefined,
  recorded: boolean,
  restored: boolean,
  execution: ExecutionResult,
): Promise<void> {
  if (!open) return;
  try {
    if (recorded && restored) await open.end();
    else {
      await open.keep({
        status: execution.status,
        recorded,
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

/**
 * After a recovery plan ran: every original device of the run it recovers
 * is read from the control system; the run is closed (recorded as
 * `recovered`) only when each reads its original within tolerance.
 */
async function closeRecovered(
  a: ApprovedRun,
  run: string,
  originals: Record<string, Value | null>,
  execution: ExecutionResult,
  force: InForce,
): Promise<RecoveryOutcome> {
  if (execution.status === "refused") {
    return { run, closed: false, why: "the recovery plan did not run" };
  }
  const devices = Object.keys(originals);
  const signal = timeoutSignal(a.deps.restoreTimeoutMs ?? 30_000);
  let left;
  try {
    left = await notAtOriginals(a.deps.cs, a.deps.limits, originals, signal);
  } catch (e) {
    left = [{ device: devices.join(", "), why: `cannot be read (${errorMessage(e)})` }];
  }
  if (left.length) {
    const why = left.map((x) => `${x.device}: ${x.why}`).join("; ");
    execution.errors.push(
      `run ${run} stays open: not every device it changed is back at its original (${why}); ` +
        `accel-agent plan recover ${run} shows what is left`,
    );
    return { run, closed: false, notRestored: left, why };
  }
  const { decision } = a;
  const failed = await a.recorder.record(force, decision.plan, decision.planHash, "recovered", {
    decidedBy: decision.decidedBy,
    run,
    status: "recovered",
    results: { verified: devices, by: a.run },
  });
  if (failed) {
    execution.errors.push(`the recovery could not be recorded: ${failed.error}`);
    return { run, closed: false, why: failed.error };
  }
  try {
    await a.deps.journal?.resolve(run);
  } catch (e) {
    execution.errors.push(`run ${run} is recovered but its marker stays (${errorMessage(e)})`);
  }
  return { run, closed: true };
}
