/**
 * Runs every attempt of an evaluation: each task `repeat` times, at most
 * `concurrency` attempts at once, in a stable order (task by task), and
 * reports each finished attempt as it ends. One attempt's failure never stops
 * the run.
 *
 * @module
 */
import type { LoadedConfig } from "../config/mod.ts";
import { type AttemptRecord, failedAttempt, isAttemptStop, runAttempt } from "./attempt.ts";
import type { Task } from "./task.ts";
import { errorMessage } from "../util/errors.ts";
import type { Timers } from "../util/misc.ts";

/** A per-attempt endpoint (the replay mode, and the tests' scripted server). */
export interface AttemptEndpoint {
  baseUrl: string;
  close?(): Promise<void>;
}

export interface RunOptions {
  tasks: Task[];
  /** Attempts per task (default 1). */
  repeat?: number;
  /** Attempts running at once (default 1). */
  concurrency?: number;
  /** The user's configuration; each attempt gets its own copy. */
  base: LoadedConfig;
  /** The configured model name to evaluate. */
  model: string;
  /** When set, the endpoint of each attempt (replaces the model's base URL). */
  endpoint?(task: Task, attempt: number): Promise<AttemptEndpoint>;
  env(name: string): string | undefined;
  signal?: AbortSignal;
  /** Called as each attempt ends, with how many have ended of how many. */
  onAttempt?(rec: AttemptRecord, done: number, total: number): void;
  /** The clock of each attempt's time limit; tests pass fake ones. Default: real timers. */
  timers?: Timers;
}

/** Runs all attempts; records come back ordered by task, then attempt. */
export async function runEval(o: RunOptions): Promise<AttemptRecord[]> {
  const repeat = Math.max(1, o.repeat ?? 1);
  const jobs = o.tasks.flatMap((task) =>
    Array.from({ length: repeat }, (_, i) => ({ task, attempt: i + 1 }))
  );
  const out: AttemptRecord[] = new Array(jobs.length);
  let next = 0;
  let done = 0;
  // A tool abandoned when an attempt is stopped may reject later with nobody waiting.
  const ignoreStops = (e: PromiseRejectionEvent) => {
    if (isAttemptStop(e.reason)) e.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", ignoreStops);
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      const job = jobs[i];
      if (!job) break;
      // Once the run is cancelled, the attempts not started are recorded, not run.
      out[i] = o.signal?.aborted
        ? failedAttempt(job.task, job.attempt, `not run: ${stopText(o.signal.reason)}`)
        : await one(o, job.task, job.attempt);
      done++;
      o.onAttempt?.(out[i], done, jobs.length);
    }
  };
  try {
    const k = Math.max(1, Math.min(o.concurrency ?? 1, jobs.length));
    await Promise.all(Array.from({ length: k }, worker));
  } finally {
    globalThis.removeEventListener("unhandledrejection", ignoreStops);
  }
  return out;
}

function stopText(reason: unknown): string {
  return errorMessage(reason ?? "cancelled");
}

async function one(o: RunOptions, task: Task, attempt: number): Promise<AttemptRecord> {
  let endpoint: AttemptEndpoint | undefined;
  try {
    try {
      endpoint = await o.endpoint?.(task, attempt);
    } catch (e) {
      return failedAttempt(task, attempt, `no endpoint: ${errorMessage(e)}`);
    }
    return await runAttempt(
      task,
      attempt,
      o.base,
      { name: o.model, ...(endpoint ? { baseUrl: endpoint.baseUrl } : {}) },
      o.env,
      o.signal,
      o.timers,
    );
  } finally {
    await endpoint?.close?.();
  }
}
