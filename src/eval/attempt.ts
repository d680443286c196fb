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
import { resolveConfigPath } from "../config/paths.ts";
import { type Config, type LoadedConfig, resolveModel } from "../config/mod.ts";
import type { Usage } from "../llm/types.ts";
import { createApp } from "../app/app.ts";
import type { Io } from "../app/io.ts";
import { simulatorFor, withConditions } from "./conditions.ts";
import { grade, type Observation, type ObservedPlan } from "./graders.ts";
import { type AttemptRecord, auditLines, failedAttempt, observe } from "./record.ts";
import type { Task } from "./task.ts";
import { errorMessage } from "../util/errors.ts";
import { realTimers, type Timers } from "../util/misc.ts";

export { type AttemptRecord, type AuditLine, failedAttempt, type RecordedCall } from "./record.ts";

/** Where and how to reach the model for one attempt. */
export interface AttemptModel {
  /** A configured model name (`[llm.models]`). */
  name: string;
  /** Replaces the endpoint's base URL for this attempt (the replay mode). */
  baseUrl?: string;
}

/**
 * Runs one attempt; never throws for what the agent or the model did.
 * `timers` keep its time limit and its wall and model times.
 */
export async function runAttempt(
  task: Task,
  attempt: number,
  base: LoadedConfig,
  model: AttemptModel,
  env: (name: string) => string | undefined,
  signal?: AbortSignal,
  timers: Timers = realTimers,
): Promise<AttemptRecord> {
  const started = timers.now();
  // Under the state directory: the one place the program's grants let it write.
  const root = `${
    resolveConfigPath(base.config.state.dir, base.baseDir, env("HOME") ?? base.baseDir)
  }/eval`;
  await Deno.mkdir(root, { recursive: true, mode: 0o700 });
  const dir = await Deno.makeTempDir({ dir: root, prefix: `${task.id}-` });
  const rec = failedAttempt(task, attempt);
  delete rec.reason;
  delete rec.error;
  const stop = new AbortController();
  const timer = timers.setTimeout(
    () => stop.abort(new AttemptStopped(`timed out after ${task.limits.seconds} s`)),
    task.limits.seconds * 1000,
  );
  const onOuter = () => stop.abort(new AttemptStopped(reasonText(signal?.reason)));
  if (signal?.aborted) onOuter();
  else signal?.addEventListener("abort", onOuter, { once: true });
  const config = attemptConfig(task, base, model, dir);
  const startMs = Date.now();
  const sim = simulatorFor(task.seed, task.conditions, startMs);
  let app: Awaited<ReturnType<typeof createApp>> | undefined;
  try {
    const cs = await withConditions(sim, task.conditions, startMs);
    app = await createApp(
      { loaded: { ...base, config }, controlSystem: cs, profile: "sim-eval" },
      quietIo(env, base.baseDir),
    );
    const plansByCall = new Map<string, ObservedPlan>();
    for (const user of task.turns) {
      let answer = "";
      let modelStart = timers.now();
      for await (const ev of app.turn(user, stop.signal)) {
        answer = observe(ev, rec, plansByCall, answer);
        if (ev.type === "tool_start" || ev.type === "turn_complete") {
          rec.modelMs += timers.now() - modelStart;
        }
        if (ev.type === "tool_end") modelStart = timers.now();
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
    rec.plans = [...plansByCall.values()];
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
        unfinished: rec.audit.flatMap((a) =>
          a.status === "failed" || a.status === "aborted" ? [a.status] : []
        ),
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
    rec.error = `crashed: ${errorMessage(e)}`;
  } finally {
    timers.clearTimeout(timer);
    signal?.removeEventListener("abort", onOuter);
    try {
      await app?.close();
    } catch (e) {
      rec.error ??= `crashed while closing: ${errorMessage(e)}`;
    }
    await sim.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const failed = rec.verdicts.find((v) => !v.passed);
  rec.passed = !rec.error && failed === undefined && rec.verdicts.length > 0;
  rec.reason = rec.error ?? failed?.reason;
  rec.wallMs = timers.now() - started;
  return rec;
}

/** The user's configuration, made into one attempt's: its own state, simulator and profile. */
function attemptConfig(task: Task, base: LoadedConfig, model: AttemptModel, dir: string) {
  const config = structuredClone(base.config);
  config.profile = { ...config.profile, name: "sim-eval", auto_approve: true };
  config.facility = { ...config.facility, adapter: "simulator" };
  config.simulator = { ...config.simulator, seed: task.seed };
  config.state = { ...config.state, dir: `${dir}/state` };
  config.sandbox = {
    ...config.sandbox,
    work_dir: `${dir}/work`,
    prewarm: false,
    spare_processes: 0,
  };
  config.llm.default = model.name;
  if (model.baseUrl !== undefined) {
    const entry = config.llm.models[model.name];
    config.llm.models[model.name] = typeof entry === "object"
      ? { ...entry, base_url: model.baseUrl }
      : { model: entry ?? model.name, base_url: model.baseUrl };
  }
  return config;
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
  return errorMessage(reason ?? "cancelled");
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
