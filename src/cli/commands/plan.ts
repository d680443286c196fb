/**
 * Plans without an LLM: `plan show PLAN [--reusable]` and
 * `plan run PLAN [--approved-hash TOKEN]`. PLAN is a
 * file, or the ID of a plan saved under the state directory's `plans/`. The
 * same path as the agent's: preflight against live values, approval bound to
 * the hash, executor, audit. `plan show` is where approval tokens come from:
 * the operator's own command, never a tool of the model.
 * Plan text and the results' details are shown through {@link untrusted}.
 *
 * @module
 */
import { PlanFileError, readPlanFile } from "../../plan/plan_file.ts";
import type { Plan } from "../../plan_model/plan.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import type { ProposeOutcome } from "../../plan/service.ts";
import type { Restore } from "../../plan/executor.ts";
import { TokenApprover, usedText } from "../../safety/approval.ts";
import { forModel } from "../../tools/propose_plan.ts";
import type { App } from "../../app/app.ts";
import { TerminalApprover } from "../term/approval_prompt.ts";
import { CliError, Exit, type ExitCode } from "../../app/exit.ts";
import { fail } from "./fail.ts";
import {
  abortOnSignals,
  cancelledBy,
  type Io,
  SIGNAL_EXIT,
  type StopSignal,
} from "../../app/io.ts";
import { planColumns, renderPlan } from "../term/plan_table.ts";
import { wrapLine } from "../term/screen_text.ts";
import { TerminalRenderer } from "../term/render.ts";
import { settleDrafts } from "../term/elog_after.ts";
import { turnDrafts } from "../term/elog_turn.ts";
import { style } from "../term/style.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";

/** A plan named on the command line: a file, or the ID of a saved plan. */
export interface PlanRef {
  path: string;
  /** Set when the plan is one saved under the plans directory. */
  id?: string;
}

/**
 * A path when `ref` has a `/` or ends in `.json`/`.toml`; otherwise the ID of
 * a plan saved in `plansDir` (`plans/ID.json`).
 */
export async function resolvePlanRef(ref: string, plansDir: string): Promise<PlanRef> {
  if (ref.includes("/") || /\.(json|toml)$/.test(ref)) {
    const dir = ref.slice(0, ref.lastIndexOf("/"));
    const id = dir === plansDir ? ref.slice(dir.length + 1).replace(/\.json$/, "") : undefined;
    return { path: ref, ...(id ? { id } : {}) };
  }
  if (!/^[\w.-]+$/.test(ref) || ref.startsWith(".")) {
    throw new CliError(`"${ref}" is neither a plan file nor a saved plan's ID`, Exit.USAGE);
  }
  const path = `${plansDir}/${ref}.json`;
  try {
    await Deno.stat(path);
  } catch {
    throw new CliError(
      `no saved plan with ID ${ref} in ${plansDir}; give a file as ./${ref} or path/${ref}.json`,
      Exit.USAGE,
    );
  }
  return { path, id: ref };
}

async function load(ref: PlanRef) {
  try {
    return await readPlanFile(ref.path);
  } catch (e) {
    if (e instanceof PlanFileError) throw new CliError(e.message, Exit.USAGE);
    throw e;
  }
}

interface Issued {
  token: string;
  reusable: boolean;
  expiresAt?: string;
}

/**
 * `plan show PLAN`: the preflighted plan and, when it passes and this profile
 * runs plans, an approval token for exactly this plan. `reusable`: the token
 * does not expire (an approved procedure), which the audit records.
 */
export async function runPlanShow(
  app: App,
  refText: string,
  json: boolean,
  io: Io,
  reusable = false,
): Promise<number> {
  const ref = await resolvePlanRef(refText, app.plans.plansDir);
  const checked = await app.plans.service.check(await load(ref));
  const issued = checked.ok && app.profile.plans
    ? await issueToken(app, checked, reusable, json, io)
    : undefined;
  if (reusable && !issued) {
    fail(
      io,
      json,
      "not_approved",
      checked.ok
        ? `the ${app.profile.name} profile runs no plans; no approval was given`
        : "a plan that fails preflight cannot be approved as a procedure",
      Exit.FAILURE,
      { plan_hash: checked.hash, violations: checked.violations },
    );
  }
  if (json) {
    io.out(`${
      terminalJson({
        plan_hash: checked.hash,
        ...(ref.id ? { plan_id: ref.id } : {}),
        ok: checked.ok,
        read_only: checked.readOnly,
        estimated_seconds: checked.estimatedSeconds,
        scan_points: checked.scanPoints,
        changes: checked.changes,
        violations: checked.violations,
        approval: issued
          ? {
            token: issued.token,
            reusable: issued.reusable,
            expires_at: issued.expiresAt ?? null,
            run: `accel-agent plan run ${refText} --approved-hash ${issued.token}`,
          }
          : null,
        plan: checked.plan,
      })
    }\n`);
  } else {
    io.out(renderPlan(checked, style(io.color), planColumns(io)));
    if (issued) {
      const s = style(io.color);
      const kind = issued.reusable
        ? "reusable procedure, recorded in the audit log"
        : `single-use, valid until ${issued.expiresAt}`;
      // The heading wraps between words; the token and the command stay whole, to be copied.
      const heading = wrapLine(`approval token (${kind}):`, planColumns(io))
        .map((l, i) => i === 0 ? l.replace("approval token", s.bold("approval token")) : l);
      io.out(
        `${heading.join("\n")}\n  ${issued.token}\n` +
          `run it with: accel-agent plan run ${
            untrusted(refText)
          } --approved-hash ${issued.token}\n`,
      );
    }
  }
  return checked.ok ? Exit.OK : Exit.FAILURE;
}

async function issueToken(
  app: App,
  checked: PreflightedPlan,
  reusable: boolean,
  json: boolean,
  io: Io,
): Promise<Issued> {
  let token, claims;
  try {
    ({ token, claims } = await app.plans.tokens.issue(checked.hash, {
      ttlMs: app.plans.approvalExpiryMs,
      reusable,
    }));
  } catch (e) {
    fail(
      io,
      json,
      "error",
      `cannot issue an approval token: ${errorMessage(e)}`,
      Exit.FAILURE,
      {
        plan_hash: checked.hash,
      },
    );
  }
  const expiresAt = claims.expiresAt ? new Date(claims.expiresAt).toISOString() : undefined;
  if (reusable) {
    const failed = await app.plans.service.recordDecision(
      checked.plan,
      checked.hash,
      "approved_as_procedure",
      { decidedBy: "operator: plan show --reusable", token: { id: claims.id, reusable: true } },
    );
    // An approval the audit does not hold is not given: the token is not shown.
    if (failed) {
      fail(io, json, "audit_failed", failed.error, Exit.FAILURE, { plan_hash: checked.hash });
    }
  }
  return { token, reusable, ...(expiresAt ? { expiresAt } : {}) };
}

export async function runPlanRun(
  app: App,
  refText: string,
  approvedHash: string | undefined,
  json: boolean,
  io: Io,
  elog?: "post" | "skip",
): Promise<number> {
  const ref = await resolvePlanRef(refText, app.plans.plansDir);
  const plan = await load(ref);
  const renderer = new TerminalRenderer(io, {
    showUsage: false,
    showPlan: approvedHash !== undefined && !json
      ? (p) => renderPlan(p, style(io.color), planColumns(io))
      : undefined,
  });
  if (approvedHash !== undefined) {
    await refuseBadToken(app, plan, approvedHash, json, io);
    app.plans.approver = new TokenApprover(approvedHash, app.plans.tokens);
  } else if (io.stdinIsTerminal && io.stdoutIsTerminal) {
    app.plans.approver = new TerminalApprover(io, () => renderer.pause());
  } else {
    const checked = await app.plans.service.check(plan);
    fail(
      io,
      json,
      "approval_required",
      `approval required and no terminal to ask on: nothing was written; review it with ` +
        `"accel-agent plan show ${refText}", which gives an approval token, then run ` +
        `"accel-agent plan run ${refText} --approved-hash TOKEN"`,
      Exit.APPROVAL_REQUIRED,
      { plan_hash: checked.hash, ...(ref.id ? { plan_id: ref.id } : {}) },
    );
  }
  const controller = new AbortController();
  let outcome: ProposeOutcome;
  let stoppedBy: StopSignal | undefined;
  {
    // SIGTERM and SIGHUP (a closed terminal) stop a plan exactly as Ctrl-C does: restore, record, report.
    using stop = abortOnSignals(controller, cancelledBy);
    // Progress goes to stderr in --json mode too: a long plan should show it is alive.
    outcome = await app.plans.service.propose(plan, app.plans.approver, controller.signal, (ev) => {
      if (!json || ev.type === "plan_progress") renderer.handle(ev);
    });
    renderer.end();
    stoppedBy = stop.received;
  }
  const code = exitCodeOf(outcome, stoppedBy);
  if (!json && outcome.status !== "rejected" && outcome.status !== "audit_failed") {
    io.out(summary(outcome, io));
  }
  // A plan that reached the machine leaves a logbook draft: posted, skipped, asked or kept.
  const drafts = await settleDrafts(app, await turnDrafts(app.plans, undefined), {
    choice: elog,
    ask: !json && stoppedBy === undefined && io.stdinIsTerminal && io.stdoutIsTerminal,
    json,
    decidedBy: elog ? `plan run --elog ${elog}` : "operator: terminal",
  }, io);
  if (json) {
    io.out(
      `${
        terminalJson({
          ...forModel(outcome, app.plans.sandboxPath),
          elog: drafts[0] ?? null,
          exit_code: code,
        })
      }\n`,
    );
  }
  // A refusal is one line on stderr, with or without --json.
  if (outcome.status === "rejected") {
    throw new CliError(
      `plan ${outcome.planHash.slice(0, 12)} rejected: ${outcome.reason ?? "no reason given"}; ` +
        `nothing was written`,
      code,
    );
  }
  if (outcome.status === "audit_failed") throw new CliError(outcome.error, code);
  return code;
}

/**
 * A token that cannot approve this plan (not a token, not ours, another
 * plan's, expired) is refused before the plan is checked or shown: one line,
 * recorded in the audit. The approver checks again, and records its use.
 */
async function refuseBadToken(
  app: App,
  plan: Plan,
  token: string,
  json: boolean,
  io: Io,
): Promise<void> {
  const hash = await app.plans.service.hashOf(plan);
  let reason: string;
  try {
    const checked = await app.plans.tokens.check(token, hash);
    const used = checked.ok ? await app.plans.tokens.usedAt(checked.claims) : undefined;
    if (checked.ok && used === undefined) return;
    reason = `approval refused: ${checked.ok ? usedText(used as string) : checked.reason}`;
  } catch (e) {
    reason = `approval refused: cannot check the token (${errorMessage(e)})`;
  }
  const failed = await app.plans.service.recordDecision(plan, hash, "rejected", {
    decidedBy: "--approved-hash",
    errors: [reason],
  });
  if (failed) fail(io, json, "audit_failed", failed.error, Exit.FAILURE, { plan_hash: hash });
  fail(
    io,
    json,
    "rejected",
    `plan ${hash.slice(0, 12)} rejected: ${reason}; nothing was written`,
    Exit.FAILURE,
    { plan_hash: hash, reason },
  );
}

function exitCodeOf(o: ProposeOutcome, stoppedBy?: StopSignal): ExitCode {
  // A plan that ran without its outcome in the audit did not succeed, whatever it wrote.
  if ("recorded" in o && !o.recorded) return Exit.FAILURE;
  // A recovery that left its run open did not recover it.
  if ("recovery" in o && o.recovery && !o.recovery.closed) return Exit.FAILURE;
  switch (o.status) {
    case "completed":
      return Exit.OK;
    case "invalid":
      return Exit.USAGE;
    case "deferred":
      return Exit.APPROVAL_REQUIRED;
    case "aborted":
      // An alarm abort is a failure of the plan; only the operator's Ctrl-C is a cancellation.
      return o.execution.abortedBy === "operator"
        ? SIGNAL_EXIT[stoppedBy ?? "SIGINT"]
        : Exit.FAILURE;
    default:
      return Exit.FAILURE;
  }
}

/** One line of untrusted text (violations and details quote plan and facility text). */
function one(x: unknown): string {
  return untrusted(typeof x === "string" ? x : JSON.stringify(x) ?? String(x));
}

/** How a restore was checked, in the words of a write's result. */
function restoreCheck(r: Restore): string {
  return r.readbackDevice
    ? `confirmed by ${r.readbackDevice} = ${r.readback}`
    : `setpoint accepted, no readback device; reads ${r.readback}`;
}

function summary(o: ProposeOutcome, io: Io): string {
  const s = style(io.color);
  const shown = forModel(o);
  const lines: string[] = [];
  const status = shown.status;
  const unrecorded = "recorded" in shown && !shown.recorded
    ? ` ${s.red("(outcome not recorded)")}`
    : "";
  const head = (status === "completed" ? s.green(status) : s.red(status)) + unrecorded;
  lines.push(`plan ${o.status === "invalid" ? "" : o.planHash.slice(0, 12) + " "}${head}`);
  const texts: { [K in "errors" | "violations" | "reason" | "note"]?: string | string[] } = shown;
  for (const key of ["errors", "violations", "reason", "note"] as const) {
    const v = texts[key];
    if (Array.isArray(v)) { for (const x of v) lines.push(`  ${one(x)}`); }
    else if (typeof v === "string") lines.push(`  ${one(v)}`);
  }
  if ("execution" in o) {
    for (const r of [...o.execution.results, ...o.execution.rollback]) {
      const written = r.written
        ? ` (sent: ${r.written.map((v) => JSON.stringify(v)).join(", ")})`
        : "";
      lines.push(
        `  ${r.ok ? s.green("✓") : s.red("✗")} ${one(r.where)} ${one(r.detail + written)}`,
      );
    }
    for (const r of o.execution.restores) {
      lines.push(
        `  ${r.ok ? s.green("↺") : s.red("✗")} ${
          one(
            r.ok
              ? `restored ${r.device} to ${r.to} (${restoreCheck(r)})`
              : `${r.device} not restored to ${r.to}: ${r.error ?? "not confirmed"}`,
          )
        }`,
      );
    }
    for (const f of o.execution.csvFiles) lines.push(`  scan data: ${one(f)}`);
    if (o.recovery?.closed) {
      lines.push(`  ${s.green("↺")} ${one(`run ${o.recovery.run} recovered and closed`)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
