/**
 * What a sandbox run's result says in words: why the host stopped it, and
 * the output cap applied again on the host's side.
 *
 * @module
 */
import { OutputCap } from "./output_cap.ts";
import type { RunResult, SandboxLimits } from "./types.ts";

type Killed = NonNullable<RunResult["killed"]>;

/** What the result says when the host stopped a run, by why. */
export function killedMessage(
  why: Killed | undefined,
  timeoutMs: number,
  limits: SandboxLimits,
): string {
  switch (why) {
    case "timeout":
      return `stopped by the time limit of ${timeoutMs / 1000} s (the process was killed)`;
    case "memory":
      return `stopped: the sandbox used more than ${limits.memoryMb} MB of memory (the process was killed)`;
    case "disk":
      return `stopped: the run wrote more than ${limits.maxWorkMb} MB, its disk quota (its files were not kept)`;
    case "output":
      return "stopped: the code wrote too much to the sandbox's protocol pipe (the process was killed)";
    case "cancelled":
      return "cancelled";
    default:
      return "the Python interpreter crashed; a fresh one is started for the next run";
  }
}

/** Longest error line kept. */
export const MAX_ERROR_CHARS = 2_000;

/**
 * The output cap again, on the agent's side: whatever happened inside the
 * sandbox, at most `max` characters (and the marker) reach the reader.
 */
export function recap(text: unknown, max: number): string {
  const s = typeof text === "string" ? text : "";
  // The worker's cap adds one marker line; anything longer was not capped there.
  if (s.length <= max + 80) return s;
  const cap = new OutputCap(max);
  cap.push(s);
  return cap.text();
}

/** The directory part of a path (`/` at the top). */
export function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}
