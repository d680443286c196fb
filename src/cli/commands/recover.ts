/**
 * Plans that did not finish: the warning every command prints while one is
 * left, and `plan recover [RUN] [--dismiss]`, which lists them, saves the
 * plan that puts their devices back and runs it through the usual approval
 * (the terminal's prompt, or a token from `plan show` for scripts), or
 * records that the operator dismissed one.
 *
 * @module
 */
import { savePlan } from "../../plan/plan_file.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { runPlanRun } from "./plan.ts";
import { style } from "../term/style.ts";
import { unfinishedText } from "../term/unfinished_notice.ts";

export async function runPlanRecover(
  app: App,
  run: string | undefined,
  dismiss: boolean,
  json: boolean,
  io: Io,
  elog?: "post" | "skip",
): Promise<number> {
  const service = app.plans.service;
  if (run === undefined) {
    const runs = await service.unfinished();
    if (json) io.out(`${terminalJson({ unfinished: runs })}\n`);
    else if (runs.length === 0) io.out("no unfinished plans\n");
    else for (const m of runs) io.out(`${unfinishedText(m)}\n`);
    return Exit.OK;
  }
  const marker = (await service.unfinished()).find((m) => m.run === run || m.run.startsWith(run));
  if (!marker) {
    throw new CliError(
      `no unfinished plan with run id ${untrusted(run)}; accel-agent plan recover lists them`,
      Exit.USAGE,
    );
  }
  if (dismiss) {
    const failed = await service.dismiss(marker, "operator: plan recover --dismiss");
    if (failed) throw new CliError(failed.error, Exit.FAILURE);
    if (json) io.out(`${terminalJson({ status: "dismissed", run: marker.run, exit_code: 0 })}\n`);
    else io.out(`run ${marker.run} dismissed; the audit log records it\n`);
    return Exit.OK;
  }
  const { plan, skipped } = await service.recoveryPlan(marker);
  for (const x of skipped) {
    io.err(`accel-agent: ${untrusted(x.device)} is not restored: ${untrusted(x.why)}\n`);
  }
  if (!plan) {
    // Nothing to put back: every device reads its original. Close the run, recorded.
    const failed = await service.dismiss(marker, "already at the originals (plan recover)");
    if (failed) throw new CliError(failed.error, Exit.FAILURE);
    if (json) {
      io.out(`${terminalJson({ status: "already_restored", run: marker.run, exit_code: 0 })}\n`);
    } else {
      io.out(`every device of run ${marker.run} already reads its original; the run is closed\n`);
    }
    return Exit.OK;
  }
  const path = await savePlan(app.plans.plansDir, plan, `recover-${marker.run.slice(0, 8)}`);
  const id = path.slice(app.plans.plansDir.length + 1).replace(/\.json$/, "");
  if (!json) io.err(style(io.color).dim(`recovery plan saved as ${id}\n`));
  return await runPlanRun(app, id, undefined, json, io, elog);
}
