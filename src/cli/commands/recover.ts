/**
 * Plans that did not finish: the warning every command prints while one is
 * left, and `plan recover [RUN] [--dismiss]`, which lists them, saves the
 * plan that puts their devices back (to the originals of the audit's
 * write-ahead record, never the marker's) and runs it through the usual
 * approval (the terminal's prompt, or a token from `plan show` for
 * scripts), or records that the operator dismissed one. A run is closed as
 * restored only when its devices, read from the control system, are at their
 * originals; anything else keeps it open, and one line says why.
 *
 * @module
 */
import { savePlan } from "../../plan/plan_file.ts";
import { type CheckedRun, laterRunOnItsDevices } from "../../plan/recovery.ts";
import { isRunIdPrefix } from "../../plan/run_journal.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";
import type { Value } from "../../adapters/adapter.ts";
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { fail } from "./fail.ts";
import { runPlanRun } from "./plan.ts";
import { style } from "../term/style.ts";
import { unfinishedJson, unfinishedText } from "../term/unfinished_notice.ts";

export async function runPlanRecover(
  app: App,
  run: string | undefined,
  dismiss: boolean,
  json: boolean,
  io: Io,
  elog?: "post" | "skip",
): Promise<number> {
  const service = app.plans.service;
  // The running directory damaged (a file in its place, unreadable): one line, never a trace.
  const unfinished = async () => {
    try {
      return await service.unfinished();
    } catch (e) {
      throw new CliError(
        `cannot look for unfinished plans in ${untrusted(app.stateDir)}/running (${
          untrusted(errorMessage(e))
        })`,
        Exit.FAILURE,
      );
    }
  };
  if (run === undefined) {
    const runs = await unfinished();
    if (json) io.out(`${terminalJson({ unfinished: runs.map(unfinishedJson) })}\n`);
    else if (runs.length === 0) io.out("no unfinished plans\n");
    else for (const m of runs) io.out(`${unfinishedText(m)}\n`);
    return Exit.OK;
  }
  // Checked before anything is read or recorded.
  if (!isRunIdPrefix(run)) {
    throw new CliError(
      `not a run id: ${untrusted(run)} (36 hex digits and dashes, or the first 8 or more of ` +
        "them); accel-agent plan recover lists the unfinished runs",
      Exit.USAGE,
    );
  }
  const runs = await unfinished();
  const target = pick(runs, run);
  const id = target.marker.run;
  if (dismiss) {
    const failed = await service.dismiss(target, "operator: plan recover --dismiss");
    if (failed) fail(io, json, "audit_failed", failed.error, Exit.FAILURE, { run: id });
    if (json) io.out(`${terminalJson({ status: "dismissed", run: id, exit_code: 0 })}\n`);
    else io.out(`run ${id} dismissed; the audit log records it\n`);
    return Exit.OK;
  }
  function still(why: string, extra: Record<string, unknown> = {}): never {
    fail(io, json, "still_open", untrusted(`run ${id} stays open: ${why}`), Exit.FAILURE, {
      run: id,
      ...extra,
    });
  }
  if (target.problem !== undefined || !target.originals) {
    still(
      `${target.problem ?? "no originals"}; nothing was written. Check its devices by hand, ` +
        `then: accel-agent plan recover ${id} --dismiss`,
    );
  }
  const later = laterRunOnItsDevices(target, runs);
  if (later) {
    still(
      `run ${later.run}, which started after it, changed ${later.device} too; recover or ` +
        `dismiss that run first: accel-agent plan recover ${later.run}; nothing was written`,
    );
  }
  /** What the operator can do about a run that stays open for now. */
  const retry = `; nothing was written. Try again when its devices can be read, or check them by ` +
    `hand, then: accel-agent plan recover ${id} --dismiss`;
  const trusted = target as CheckedRun & { originals: Record<string, Value | null> };
  let built;
  try {
    built = await service.recoveryPlan(trusted);
  } catch (e) {
    still(`its devices cannot be read (${errorMessage(e)})${retry}`);
  }
  const { plan, skipped } = built;
  if (!plan) {
    let closed;
    try {
      closed = await service.closeIfRestored(trusted);
    } catch (e) {
      still(`${errorMessage(e)}${retry}`);
    }
    if (!closed.closed) {
      still(
        `${closed.left.map((x) => `${x.device}: ${x.why}`).join("; ")}${retry}`,
        { not_restored: closed.left },
      );
    }
    if (json) io.out(`${terminalJson({ status: "already_restored", run: id, exit_code: 0 })}\n`);
    else io.out(`every device of run ${id} reads its original; the run is closed\n`);
    return Exit.OK;
  }
  for (const x of skipped) {
    io.err(`accel-agent: ${untrusted(x.device)} is not restored: ${untrusted(x.why)}\n`);
  }
  const path = await savePlan(app.plans.plansDir, plan, `recover-${id.slice(0, 8)}`);
  const planId = path.slice(app.plans.plansDir.length + 1).replace(/\.json$/, "");
  if (!json) io.err(style(io.color).dim(`recovery plan saved as ${planId}\n`));
  return await runPlanRun(app, planId, undefined, json, io, elog);
}

/** The unfinished run `run` names (an id, or a unique prefix of one). */
function pick(runs: CheckedRun[], run: string): CheckedRun {
  const exact = runs.find((m) => m.marker.run === run);
  const hits = exact ? [exact] : runs.filter((m) => m.marker.run.startsWith(run));
  if (hits.length > 1) {
    throw new CliError(
      `${run} names ${hits.length} unfinished runs; give more of the run id`,
      Exit.USAGE,
    );
  }
  if (!hits[0]) {
    throw new CliError(
      `no unfinished plan with run id ${run}; accel-agent plan recover lists them`,
      Exit.USAGE,
    );
  }
  return hits[0];
}
