/**
 * One attempt at one task: a fresh simulator from the task's seed with its
 * starting conditions, a fresh session and its own state directory (a temp
 * directory, removed afterwards), the `sim-eval` profile with automatic
 * approval (the simulator only; every approval is recorded in the attempt's
 * audit as "sim-eval auto-approval"). A crash, a timeout or a budget
 * exceeded ends the attempt as a failure with the reason.
 *
 * @module
 */
import { createSimulator } from "../adapters/simulator/mod.ts";
import type { AgentEvent } from "../agent/events.ts";
import { type Config, type LoadedConfig, resolveModel } from "../config/mod.ts";
import type { Usage } from "../llm/types.ts";
import { createApp } from "../cli/app.ts";
import type { Io } from "../cli/io.ts";
import { withConditions } from "./conditions.ts";
import {
  grade,
  type Observation,
  type ObservedPlan,
  type PlanAction,
  type Verdict,
} from "./graders.ts";
import type { Task } from "./task.ts";

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

/** Where and how to reach the model for one attempt. */
export interface AttemptModel {
  /** A configured model name (`[llm.models]`). */
  name: string;
  /** Replaces the endpoint's base URL for this attempt (the replay mode). */
  baseUrl?: string;
}

const RESULT_CHARS = 2_000;

/** Runs one attempt; never throws for what the agent or the model did. */
export async function runAttempt(
  task: Task,
  attempt: number,
  base: LoadedConfig,
  model: AttemptModel,
  env: (name: string) => string | undefined,
  signal?: AbortSignal,
): Promise<AttemptRecord> {
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: `accel-eval-${task.id}-` });
  const rec = failedAttempt(task, attempt);
  delete rec.reason;
  delete rec.error;
  const stop = new AbortController();
  const timer = setTimeout(
    () => stop.abort(new AttemptStopped(`timed out after ${task.limits.seconds} s`)),
    task.limits.seconds * 1000,
  );
  const onOuter = () => stop.abort(new AttemptStopped(reasonText(signal?.reason)));
  if (signal?.aborted) onOuter();
  else signal?.addEventListener("abort", onOuter, { once: true });
  const config = attemptConfig(task, base, model, dir);
  const sim = createSimulator({ seed: task.seed });
  let app: Awaited<ReturnType<typeof createApp>> | undefined;
  try {
    const cs = await withConditions(sim, task.conditions, Date.now());
    app = await createApp(
      { loaded: { ...base, config }, controlSystem: cs, profile: "sim-eval" },
      quietIo(env, base.baseDir),
    );
    const plansByHash = new Map<string, ObservedPlan>();
    for (const user of task.turns) {
      let answer = "";
      let modelStart = performance.now();
      for await (const ev of app.turn(user, stop.signal)) {
        answer = observe(ev, rec, plansByHash, answer);
        if (ev.type === "tool_start" || ev.type === "turn_complete") {
          rec.modelMs += performance.now() - modelStart;
        }
        if (ev.type === "tool_end") modelStart = performance.now();
        if (ev.type === "error") rec.error ??= ev.message;
        if (ev.type === "cancelled") rec.error ??= reasonText(stop.signal.reason ?? ev.reason);
        const over = overLimits(task, app.session.usage.totalTokens, modelCalls(app));
        if (over) {
          // Leaving the loop ends the turn at this event: nothing more is called.
          rec.error ??= over;
          break;
        }
      }
      rec.transcript.push({ user, answer });
      if (rec.error) break;
    }
    rec.plans = [...plansByHash.values()];
    const usage = app.session.usage;
    const runs = app.agents.list();
    // Sub-agents' model calls count too: delegation is not free.
    rec.modelCalls = modelCalls(app) + runs.reduce((s, r) => s + r.turns, 0);
    rec.promptTokens = usage.promptTokens +
      runs.reduce((s, r) => s + (r.usage?.promptTokens ?? 0), 0);
    rec.completionTokens = usage.completionTokens +
      runs.reduce((s, r) => s + (r.usage?.completionTokens ?? 0), 0);
    rec.tokens = usage.totalTokens + runs.reduce((s, r) => s + r.tokens, 0);
    const cost = priced(config, [
      ...app.session.usageByModel,
      ...runs.map((r) => [r.model, r.usage] as const),
    ]);
    if (cost !== undefined) rec.costUsd = cost;
    rec.audit = await auditLines(`${dir}/state/audit`);
    rec.written = [...new Set(rec.audit.flatMap((a) => Object.keys(a.originals ?? {})))].sort();
    if (!rec.error) {
      const obs: Observation = {
        calls: rec.calls,
        plans: rec.plans,
        written: rec.written,
        answer: rec.transcript.at(-1)?.answer ?? "",
        tokens: rec.tokens,
        toolCalls: rec.toolCalls,
        modelCalls: rec.modelCalls,
      };
      const truth = {
        read: async (d: string) => {
          const [r] = await cs.read([d]);
          return typeof r?.value === "number" ? r.value : undefined;
        },
        onCrestPhase: () => sim.onCrestPhaseDeg,
      };
      for (const check of task.grade) rec.verdicts.push(await grade(check, obs, truth));
    }
  } catch (e) {
    rec.error = `crashed: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onOuter);
    try {
      await app?.close();
    } catch (e) {
      rec.error ??= `crashed while closing: ${(e as Error).message}`;
    }
    await sim.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const failed = rec.verdicts.find((v) => !v.passed);
  rec.passed = !rec.error && failed === undefined && rec.verdicts.length > 0;
  rec.reason = rec.error ?? failed?.reason;
  rec.wallMs = performance.now() - started;
  return rec;
}

/** The user's configuration, made into one attempt's: its own state, simulator and profile. */
function attemptConfig(task: Task, base: LoadedConfig, model: AttemptModel, dir: string) {
  const config = structuredClone(base.config);
  config.profile = { ...config.profile, name: "sim-eval", auto_approve: true };
  config.facility = { ...config.facility, adapter: "simulator" };
  config.simulator = { ...config.simulator, seed: task.seed };
  config.state = { ...config.state, dir: `${dir}/state` };
  config.sandbox = { ...config.sandbox, work_dir: `${dir}/work`, prewarm: false };
  config.llm.default = model.name;
  if (model.baseUrl !== undefined) {
    const entry = config.llm.models[model.name];
    config.llm.models[model.name] = typeof entry === "object"
      ? { ...entry, base_url: model.baseUrl }
      : { model: entry ?? model.name, base_url: model.baseUrl };
  }
  return config;
}

function observe(
  ev: AgentEvent,
  rec: AttemptRecord,
  plans: Map<string, ObservedPlan>,
  answer: string,
): string {
  switch (ev.type) {
    case "text":
      return answer + ev.delta;
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
      const out = ev.result as { status?: unknown; violations?: unknown; errors?: unknown };
      if (plan && (out?.status === "preflight_failed" || out?.status === "invalid")) {
        plan.preflightOk = false;
        const why = out.status === "invalid" ? out.errors : out.violations;
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

/**
 * Why an attempt was stopped from outside (its time limit, the run cancelled).
 * A tool abandoned by the loop on that abort may reject with it later, with
 * nobody waiting: the runner ignores such rejections (see {@link isAttemptStop}).
 */
export class AttemptStopped extends Error {
  override name = "AttemptStopped";
}

/** True for the reason an attempt was stopped with. */
export function isAttemptStop(reason: unknown): boolean {
  return reason instanceof AttemptStopped;
}

/**
 * US dollars for the tokens of each configured model at its own prices;
 * undefined when a model used has no prices (or a run kept no usage).
 */
function priced(
  config: Config,
  usages: (readonly [string, Usage | undefined])[],
): number | undefined {
  let sum = 0;
  for (const [name, usage] of usages) {
    if (!usage) return undefined;
    let m;
    try {
      m = resolveModel(config, name);
    } catch {
      return undefined;
    }
    if (m.priceIn === undefined || m.priceOut === undefined) return undefined;
    sum += (usage.promptTokens * m.priceIn + usage.completionTokens * m.priceOut) / 1e6;
  }
  return usages.length ? sum : undefined;
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason ?? "cancelled");
}

function modelCalls(app: { session: { messages: { role: string }[] } }): number {
  return app.session.messages.filter((m) => m.role === "assistant").length;
}

function overLimits(task: Task, tokens: number, calls: number): string | undefined {
  const l = task.limits;
  if (l.tokens !== undefined && tokens > l.tokens) {
    return `budget exceeded: ${tokens} tokens > ${l.tokens}`;
  }
  if (l.model_calls !== undefined && calls > l.model_calls) {
    return `budget exceeded: ${calls} model calls > ${l.model_calls}`;
  }
  return undefined;
}

/** The audit entries of an attempt, oldest first; written devices come from write-ahead entries. */
async function auditLines(auditDir: string): Promise<AuditLine[]> {
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
    for (const line of (await Deno.readTextFile(`${auditDir}/${name}`)).split("\n")) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as AuditLine;
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

function quietIo(env: (name: string) => string | undefined, cwd: string): Io {
  return {
    out: () => {},
    err: () => {},
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    stderrIsTerminal: false,
    color: false,
    columns: () => 100,
    env,
    cwd,
  };
}
