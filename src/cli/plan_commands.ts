/**
 * Plans and the audit trail without an LLM: `plan show FILE`, `plan run FILE
 * [--approved-hash H]`, `audit verify [FILE]`. The same path as the agent's:
 * preflight against live values, approval bound to the hash, executor, audit.
 * Plan text and the results' details are shown through {@link untrusted}.
 *
 * @module
 */
import { PlanFileError, readPlanFile } from "../plan/plan_file.ts";
import type { ProposeOutcome } from "../plan/service.ts";
import { HashApprover } from "../safety/approval.ts";
import { AuditLog, verifyAudit } from "../safety/audit.ts";
import { forModel } from "../tools/propose_plan.ts";
import type { App } from "./app.ts";
import { TerminalApprover } from "./approval_prompt.ts";
import { CliError, Exit, type ExitCode } from "./exit.ts";
import { abortOnSigint, type Io } from "./io.ts";
import { planColumns, renderPlan } from "./plan_table.ts";
import { TerminalRenderer } from "./render.ts";
import { style } from "./style.ts";
import { terminalJson, untrusted } from "../util/untrusted_text.ts";

async function load(file: string) {
  try {
    return await readPlanFile(file);
  } catch (e) {
    if (e instanceof PlanFileError) throw new CliError(e.message, Exit.USAGE);
    throw e;
  }
}

export async function runPlanShow(app: App, file: string, json: boolean, io: Io): Promise<number> {
  const checked = await app.plans.service.check(await load(file));
  if (json) {
    io.out(`${
      terminalJson({
        plan_hash: checked.hash,
        ok: checked.ok,
        read_only: checked.readOnly,
        estimated_seconds: checked.estimatedSeconds,
        scan_points: checked.scanPoints,
        changes: checked.changes,
        violations: checked.violations,
        plan: checked.plan,
      })
    }\n`);
  } else {
    io.out(renderPlan(checked, style(io.color), planColumns(io)));
  }
  return checked.ok ? Exit.OK : Exit.FAILURE;
}

export async function runPlanRun(
  app: App,
  file: string,
  approvedHash: string | undefined,
  json: boolean,
  io: Io,
): Promise<number> {
  const plan = await load(file);
  const renderer = new TerminalRenderer(io, {
    showUsage: false,
    showPlan: approvedHash !== undefined && !json
      ? (p) => renderPlan(p, style(io.color), planColumns(io))
      : undefined,
  });
  if (approvedHash !== undefined) {
    if (!/^[0-9a-f]{64}$/i.test(approvedHash)) {
      throw new CliError(
        `--approved-hash must be the plan's 64-character SHA-256 hex, got "${approvedHash}"`,
        Exit.USAGE,
      );
    }
    app.plans.approver = new HashApprover(approvedHash);
  } else if (io.stdinIsTerminal && io.stdoutIsTerminal) {
    app.plans.approver = new TerminalApprover(io, () => renderer.pause());
  } else {
    const checked = await app.plans.service.check(plan);
    if (json) {
      io.out(`${
        JSON.stringify(
          {
            status: "approval_required",
            plan_hash: checked.hash,
            note: "no terminal to ask on and no --approved-hash; nothing was written",
            exit_code: Exit.APPROVAL_REQUIRED,
          },
          null,
          2,
        )
      }\n`);
    }
    throw new CliError(
      `approval required and no terminal to ask on: review with "accel-agent plan show ${file}", then run ` +
        `"accel-agent plan run ${file} --approved-hash ${checked.hash}"`,
      Exit.APPROVAL_REQUIRED,
    );
  }
  const controller = new AbortController();
  let outcome: ProposeOutcome;
  {
    using _sigint = abortOnSigint(controller, "cancelled by SIGINT");
    // Progress goes to stderr in --json mode too: a long plan should show it is alive.
    outcome = await app.plans.service.propose(plan, app.plans.approver, controller.signal, (ev) => {
      if (!json || ev.type === "plan_progress") renderer.handle(ev);
    });
    renderer.end();
  }
  const code = exitCodeOf(outcome);
  if (json) {
    io.out(
      `${terminalJson({ ...forModel(outcome, app.plans.sandboxPath), exit_code: code })}\n`,
    );
  } else {
    io.out(summary(outcome, io));
  }
  return code;
}

function exitCodeOf(o: ProposeOutcome): ExitCode {
  switch (o.status) {
    case "completed":
      return Exit.OK;
    case "invalid":
      return Exit.USAGE;
    case "deferred":
      return Exit.APPROVAL_REQUIRED;
    case "aborted":
      // An alarm abort is a failure of the plan; only the operator's Ctrl-C is a cancellation.
      return o.execution.abortedBy === "operator" ? Exit.CANCELLED : Exit.FAILURE;
    default:
      return Exit.FAILURE;
  }
}

/** One line of untrusted text (violations and details quote plan and facility text). */
function one(x: unknown): string {
  return untrusted(typeof x === "string" ? x : JSON.stringify(x) ?? String(x));
}

function summary(o: ProposeOutcome, io: Io): string {
  const s = style(io.color);
  const shown = forModel(o);
  const lines: string[] = [];
  const status = String(shown.status);
  const head = status === "completed" ? s.green(status) : s.red(status);
  lines.push(`plan ${o.status === "invalid" ? "" : o.planHash.slice(0, 12) + " "}${head}`);
  for (const key of ["errors", "violations", "reason", "note"] as const) {
    const v = shown[key];
    if (Array.isArray(v)) { for (const x of v) lines.push(`  ${one(x)}`); }
    else if (typeof v === "string") lines.push(`  ${one(v)}`);
  }
  if ("execution" in o) {
    for (const r of [...o.execution.results, ...o.execution.rollback]) {
      lines.push(`  ${s.green("✓")} ${one(r.where)} ${one(r.detail)}`);
    }
    for (const r of o.execution.restores) {
      lines.push(
        `  ${r.ok ? s.green("↺") : s.red("✗")} ${
          one(
            `restored ${r.device} to ${r.to}${r.ok ? ` (readback ${r.readback})` : `: ${r.error}`}`,
          )
        }`,
      );
    }
    for (const f of o.execution.csvFiles) lines.push(`  scan data: ${one(f)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** `audit verify [FILE]`: one file, or the whole audit directory from its first entry. */
export async function runAuditVerify(
  app: App,
  file: string | undefined,
  json: boolean,
  io: Io,
): Promise<number> {
  const files = file ? [file] : await new AuditLog(app.plans.auditDir).files();
  if (files.length === 0) {
    throw new CliError(`no audit files in ${app.plans.auditDir}`, Exit.FAILURE);
  }
  let result;
  try {
    result = await verifyAudit(files, file === undefined);
  } catch (e) {
    throw new CliError(
      `cannot read ${file ?? app.plans.auditDir}: ${(e as Error).message}`,
      Exit.FAILURE,
    );
  }
  if (json) io.out(`${JSON.stringify(result, null, 2)}\n`);
  if (!result.ok) {
    throw new CliError(
      `audit chain broken at ${result.file}:${result.line}: ${result.reason}`,
      Exit.FAILURE,
    );
  }
  if (!json) {
    io.out(
      `audit chain intact: ${result.entries} entries in ${result.files} file${
        result.files > 1 ? "s" : ""
      }\n`,
    );
  }
  return Exit.OK;
}
