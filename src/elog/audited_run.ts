/**
 * A plan's run as the audit recorded it: its entries (started, write-ahead,
 * outcome) found by the run's id, each checked against its hash and, with
 * the audit key, its MAC, and made back into the run a draft is made from.
 * A plan draft's devices table is checked against it before the draft is
 * posted or an edit is taken, so the numbers an entry shows are the audit's,
 * whatever happened to the draft file (an edit, a copy from another state
 * directory).
 *
 * @module
 */
import { z } from "zod";
import type { Value } from "../adapters/adapter.ts";
import type { ExecutionResult } from "../plan/executor.ts";
import type { FinishedRun } from "../plan/service.ts";
import { parsePlan } from "../plan_model/plan.ts";
import type { AuditLog } from "../safety/audit.ts";
import { checkEntryLine, readAuditFile } from "../safety/audit_chain.ts";
import { entryMac } from "../safety/audit.ts";
import { sameText } from "../safety/keys.ts";
import { errorMessage } from "../util/errors.ts";

const OUTCOMES = ["completed", "failed", "aborted"];

const Run = z.looseObject({
  planHash: z.string(),
  plan: z.unknown(),
  decision: z.string(),
  decidedBy: z.string(),
  time: z.string(),
  hash: z.string(),
});

const WriteAhead = z.looseObject({
  originals: z.record(z.string(), z.unknown()),
});

const Outcome = z.looseObject({
  status: z.enum(["completed", "failed", "aborted"]),
  results: z.looseObject({
    actions: z.array(z.looseObject({ where: z.string(), ok: z.boolean() })),
    rollback: z.array(z.looseObject({ where: z.string(), ok: z.boolean() })),
    csvFiles: z.array(z.string()),
    abortedBy: z.enum(["operator", "alarm", "kill_switch"]).optional(),
  }),
  restores: z.array(z.looseObject({ device: z.string(), ok: z.boolean() })).optional(),
  errors: z.array(z.string()).optional(),
});

/** What the audit holds of a run: the run (without its outcome when none was recorded), or why not. */
export type AuditedRun =
  | { ok: true; run: FinishedRun; outcome: boolean }
  | { ok: false; why: string };

/** Run `run` as the audit in `audit.dir` recorded it. */
export async function auditedRun(audit: AuditLog, run: string): Promise<AuditedRun> {
  const needle = `"run":${JSON.stringify(run)}`;
  const found: Record<string, unknown>[] = [];
  try {
    const key = await audit.opts.key?.();
    // Newest day first, up to the day the run started: its records are in order from there.
    for (const file of (await audit.files()).reverse()) {
      if (found.some((e) => e.status === "started")) break;
      const lines = (await readAuditFile(file)).split("\n");
      const day: Record<string, unknown>[] = [];
      for (const [i, line] of lines.entries()) {
        if (!line.includes(needle)) continue;
        const checked = await checkEntryLine(line);
        if (!checked.ok) {
          return {
            ok: false,
            why: `its audit record ${file}:${i + 1} is damaged: ${checked.reason}`,
          };
        }
        const { entry } = checked;
        if (entry.run !== run) continue;
        if (
          key && (entry.mac === undefined || !sameText(await entryMac(key, entry.hash), entry.mac))
        ) {
          return {
            ok: false,
            why: `its audit record ${file}:${i + 1} carries no MAC the audit key made`,
          };
        }
        day.push(entry as unknown as Record<string, unknown>);
      }
      found.unshift(...day);
    }
  } catch (e) {
    return { ok: false, why: `the audit log in ${audit.dir} cannot be read (${errorMessage(e)})` };
  }
  const started = found.find((e) => e.status === "started");
  const ahead = found.find((e) => e.status === "write_ahead");
  if (!started || !ahead) {
    return {
      ok: false,
      why: `run ${run} is not in the audit log in ${audit.dir}: a draft made under another ` +
        "state directory is posted with that directory's config",
    };
  }
  const head = Run.safeParse(started);
  const originals = WriteAhead.safeParse(ahead);
  const plan = parsePlan(head.success ? head.data.plan : undefined);
  if (!head.success || !originals.success || !plan.ok) {
    return { ok: false, why: `the audit's records of run ${run} are not whole` };
  }
  const last = found.findLast((e) => OUTCOMES.includes(String(e.status)));
  const outcome = last === undefined ? undefined : Outcome.safeParse(last);
  if (outcome && !outcome.success) {
    return { ok: false, why: `the audit's outcome record of run ${run} is not whole` };
  }
  const o = outcome?.data;
  const execution = {
    planHash: head.data.planHash,
    status: o?.status ?? "failed",
    ...(o?.results.abortedBy ? { abortedBy: o.results.abortedBy } : {}),
    results: o?.results.actions ?? [],
    rollback: o?.results.rollback ?? [],
    restores: o?.restores ?? [],
    errors: o?.errors ?? [],
    violations: [],
    csvFiles: o?.results.csvFiles ?? [],
    startedAt: head.data.time,
    finishedAt: String(last?.time ?? head.data.time),
  } as unknown as ExecutionResult;
  return {
    ok: true,
    outcome: o !== undefined,
    run: {
      run,
      plan: plan.plan,
      planHash: head.data.planHash,
      decision: head.data.decision as FinishedRun["decision"],
      decidedBy: head.data.decidedBy,
      execution,
      originals: originals.data.originals as Record<string, Value | null>,
      auditIds: found.map((e) => String(e.hash)),
      recorded: o !== undefined,
    },
  };
}
