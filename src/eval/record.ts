/**
 * The record of one attempt (part of `--json`): what the agent did, as seen
 * in its events and its audit trail, and how it was graded.
 *
 * @module
 */
import { z } from "zod";
import type { AgentEvent } from "../agent/events.ts";
import { cutResult, resultOf } from "../tools/results.ts";
import type { ObservedPlan, PlanAction, Verdict } from "./graders.ts";
import type { Task } from "./task.ts";
import { parseJsonFile } from "../util/json_file.ts";
import { readAuditFile } from "../safety/audit_chain.ts";

const RESULT_CHARS = 2_000;

/** One tool call in the record, its result cut to keep the record readable. */
export interface RecordedCall {
  name: string;
  args: unknown;
  ok?: boolean;
  result?: string;
}

/** Everything one attempt did and how it was graded (part of `--json`). */
export interface AttemptRecord {
  task: string;
  category: string;
  attempt: number;
  passed: boolean;
  /** The first failed check's reason, or why the attempt did not finish. */
  reason?: string;
  /** Set when the attempt crashed, timed out or went over its limits. */
  error?: string;
  verdicts: Verdict[];
  tokens: number;
  promptTokens: number;
  completionTokens: number;
  toolCalls: number;
  modelCalls: number;
  /** Wall time of the attempt, and the part of it spent waiting for the model. */
  wallMs: number;
  modelMs: number;
  costUsd?: number;
  transcript: { user: string; answer: string }[];
  calls: RecordedCall[];
  plans: ObservedPlan[];
  written: string[];
  /** The attempt's audit trail, compacted: each decision, who made it, and the outcome. */
  audit: AuditLine[];
}

/** One audit entry of an attempt, as kept in its record. */
export interface AuditLine {
  planHash: string;
  decision: string;
  decidedBy: string;
  status?: string;
  /** Devices the plan may write, with their values before it (write-ahead entries). */
  originals?: Record<string, unknown>;
}

const AuditLineSchema = z.looseObject({
  planHash: z.string(),
  decision: z.string(),
  decidedBy: z.string(),
  status: z.string().optional(),
  originals: z.record(z.string(), z.unknown()).optional(),
}) satisfies z.ZodType<AuditLine>;

/** An attempt that has done nothing yet; with a reason, one that could not start. */
export function failedAttempt(task: Task, attempt: number, reason?: string): AttemptRecord {
  return {
    task: task.id,
    category: task.category,
    attempt,
    passed: false,
    ...(reason ? { reason, error: reason } : {}),
    verdicts: [],
    tokens: 0,
    promptTokens: 0,
    completionTokens: 0,
    toolCalls: 0,
    modelCalls: 0,
    wallMs: 0,
    modelMs: 0,
    transcript: [],
    calls: [],
    plans: [],
    written: [],
    audit: [],
  };
}

/** Folds one event into the record; returns the answer so far (text after the last tool call). */
export function observe(
  ev: AgentEvent,
  rec: AttemptRecord,
  plans: Map<string, ObservedPlan>,
  answer: string,
): string {
  switch (ev.type) {
    case "text":
      return answer + ev.delta;
    case "retry":
      // The failed call's text is void; the retry says it again.
      return ev.discardedText ? "" : answer;
    case "tool_start":
      rec.toolCalls++;
      rec.calls.push({ name: ev.name, args: ev.args });
      if (ev.name === "propose_plan") {
        const args = ev.args as { actions?: PlanAction[]; rollback?: PlanAction[] };
        plans.set(`call:${ev.id}`, {
          actions: Array.isArray(args?.actions) ? args.actions : [],
          rollback: Array.isArray(args?.rollback) ? args.rollback : [],
          violations: [],
        });
      }
      // Text before a tool call is thinking aloud, not the answer.
      return "";
    case "tool_end": {
      const call = rec.calls.findLast((c) => c.name === ev.name && c.ok === undefined);
      if (call) {
        call.ok = ev.ok;
        const json = JSON.stringify(ev.result) ?? "";
        call.result = json.length > RESULT_CHARS ? `${json.slice(0, RESULT_CHARS)}…` : json;
      }
      const plan = plans.get(`call:${ev.id}`);
      const out = resultOf("propose_plan", ev) ?? cutResult(ev);
      if (plan && (out?.status === "preflight_failed" || out?.status === "invalid")) {
        plan.preflightOk = false;
        const why = "violations" in out ? out.violations : "errors" in out ? out.errors : undefined;
        plan.violations = Array.isArray(why) ? why.map(String) : [String(out.status)];
      }
      if (plan && typeof out?.status === "string") plan.decision ??= out.status;
      return answer;
    }
    case "plan_proposed": {
      const last = [...plans.values()].at(-1);
      if (last) {
        last.preflightOk = ev.plan.ok;
        last.violations = ev.plan.violations.map((v) => `${v.where}: ${v.message}`);
      }
      return answer;
    }
    case "plan_decided": {
      const last = [...plans.values()].at(-1);
      if (last) last.decision = ev.decision;
      return answer;
    }
    default:
      return answer;
  }
}

/** The audit entries of an attempt, oldest first; written devices come from write-ahead entries. */
export async function auditLines(auditDir: string): Promise<AuditLine[]> {
  const out: AuditLine[] = [];
  let names: string[] = [];
  try {
    for await (const e of Deno.readDir(auditDir)) if (e.name.endsWith(".jsonl")) names.push(e.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  names = names.sort();
  for (const name of names) {
    const lines = (await readAuditFile(`${auditDir}/${name}`)).split("\n");
    for (const [i, line] of lines.entries()) {
      if (!line.trim()) continue;
      const e = parseJsonFile(AuditLineSchema, line, {
        where: `${auditDir}/${name}:${i + 1}`,
        what: "an audit entry",
        fix: "the attempt's audit is kept; check it with accel-agent audit verify",
      });
      out.push({
        planHash: e.planHash,
        decision: e.decision,
        decidedBy: e.decidedBy,
        ...(e.status ? { status: e.status } : {}),
        ...(e.originals ? { originals: e.originals } : {}),
      });
    }
  }
  return out;
}
