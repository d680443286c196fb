/**
 * Test support: attempts of tasks against their scripted transcripts, each
 * attempt served over real HTTP + SSE by its own scripted server.
 *
 * @module
 */
import { loadConfig, type LoadedConfig } from "../../src/config/mod.ts";
import { type AttemptRecord, runAttempt } from "../../src/eval/attempt.ts";
import type { AttemptEndpoint } from "../../src/eval/runner.ts";
import { loadTasks, type Task } from "../../src/eval/task.ts";
import type { Scenario } from "../support/scripted_llm_types.ts";
import { parseScenario } from "../support/scripted_llm_scenario.ts";
import { startScriptedLlm } from "../support/scripted_llm_server.ts";

/** The shipped task directory. */
export const TASKS_DIR = decodeURIComponent(
  new URL("../../configs/evals/tasks", import.meta.url).pathname,
);

/** The shipped tasks. */
export function shippedTasks(): Promise<Task[]> {
  return loadTasks([TASKS_DIR]);
}

let base: Promise<LoadedConfig> | undefined;

/** The shipped default configuration, as the eval command loads it with no file. */
export function defaultConfig(): Promise<LoadedConfig> {
  return base ??= loadConfig({ env: { get: () => undefined }, cwd: Deno.cwd() });
}

/** Only HOME passes through: the sandbox's cache lives under it. */
export const testEnv = (n: string) => (n === "HOME" ? Deno.env.get("HOME") : undefined);

/** Which scripted transcript: the solving one, or `wrong[index]`. */
export type Variant = "solving" | number;

/** The scenario of a task's transcript. */
export function scenarioOf(task: Task, variant: Variant): Scenario {
  const s = task.scripted;
  if (!s) throw new Error(`${task.id} has no scripted transcripts`);
  const json = variant === "solving" ? s.solving : s.wrong[variant];
  if (!json) throw new Error(`${task.id} has no wrong[${variant}] transcript`);
  return parseScenario(json, `${task.id}:${variant}`);
}

/** A runner endpoint: a fresh scripted server per attempt, closed after it. */
export function scriptedEndpoint(
  variant: Variant | ((task: Task) => Scenario),
): (task: Task) => Promise<AttemptEndpoint> {
  return async (task) => {
    const scenario = typeof variant === "function" ? variant(task) : scenarioOf(task, variant);
    const llm = await startScriptedLlm({ scenario });
    return { baseUrl: llm.url, close: () => llm.close() };
  };
}

/** Runs `task` once against one of its transcripts. */
export async function attemptScripted(task: Task, variant: Variant): Promise<AttemptRecord> {
  const endpoint = await scriptedEndpoint(variant)(task);
  try {
    return await runAttempt(
      task,
      1,
      await defaultConfig(),
      { name: "main", baseUrl: endpoint.baseUrl },
      testEnv,
    );
  } finally {
    await endpoint.close?.();
  }
}
