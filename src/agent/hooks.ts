/**
 * Facility hooks around tool calls: programs named in `[[hooks.before_tool]]`
 * and `[[hooks.after_tool]]` that log a call or veto it. Each is given one
 * JSON object on stdin. A `before_tool` hook that exits nonzero vetoes the
 * call (the model reads "vetoed by facility hook NAME: first line of its
 * stderr" and the tool never runs); one that cannot be started or passes its
 * timeout vetoes too (fail closed). An `after_tool` hook cannot undo a call:
 * its failure (a nonzero exit, a timeout, a program that cannot be started)
 * is reported as a `failed` event. A hook past its timeout is stopped by the
 * runner; the runner answers by the timeout plus a short grace whatever the
 * program does.
 *
 * This module decides; running the programs is the injected
 * {@link HookRunner} (`src/tools/hooks.ts` spawns them), so the loop does no I/O.
 *
 * @module
 */
import type { HookEvent } from "./events.ts";

/** One configured hook. */
export interface HookSpec {
  /** Shown in messages; default: the file name of `command[0]`. */
  name?: string;
  /** The program and its arguments (no shell). */
  command: string[];
  /** Tool names (`*` and `?` globs) the hook is for; default every tool. */
  tools?: string[];
  /** Seconds the program may take. */
  timeout_s: number;
}

export interface HooksConfig {
  before_tool: HookSpec[];
  after_tool: HookSpec[];
}

/** How one run of a hook program went. */
export type HookRun =
  | { status: "exited"; code: number; stderr: string }
  /** It could not be started (missing, not executable, not permitted). */
  | { status: "failed"; message: string }
  | { status: "timeout" };

/**
 * Runs `command` with `stdin` written to it, stopping it after `timeoutMs`
 * or on `signal`; resolves within `timeoutMs` plus the runner's grace
 * whatever the program does.
 */
export type HookRunner = (
  command: string[],
  stdin: string,
  timeoutMs: number,
  signal: AbortSignal,
) => Promise<HookRun>;

/** A tool call as the hooks are told of it. */
export interface HookCall {
  id: string;
  tool: string;
  args: unknown;
  sessionId: string;
}

/** What the loop asks of hooks; neither method throws. */
export interface ToolHooks {
  /** A `vetoed` event when a hook stops the call (the call must not run), else undefined. */
  before(call: HookCall, signal: AbortSignal): Promise<HookEvent | undefined>;
  /** Runs the `after_tool` hooks; one `failed` event per hook that failed, could not run or timed out. */
  after(
    call: HookCall & { ok: boolean; summary: string },
    signal: AbortSignal,
  ): Promise<HookEvent[]>;
}

/** Characters of the result's text an `after_tool` hook is given. */
export const SUMMARY_CHARS = 2_000;

/** Characters of a hook's stderr line kept in a veto message. */
const REASON_CHARS = 200;

/**
 * Hooks that run the configured programs through `run`. `operator` is read
 * at each call (the operator may change during a session).
 */
export function commandHooks(
  config: HooksConfig,
  runner: HookRunner,
  operator: () => string,
): ToolHooks {
  // A runner that throws is a hook that could not run (a veto before a call).
  const run = (command: string[], stdin: string, ms: number, signal: AbortSignal) =>
    runner(command, stdin, ms, signal).catch((e): HookRun => ({
      status: "failed",
      message: e instanceof Error ? e.message : String(e),
    }));
  const payload = (stage: string, call: HookCall, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      hook: stage,
      tool: call.tool,
      call_id: call.id,
      args: call.args,
      session_id: call.sessionId,
      operator: operator(),
      ...extra,
    });
  const event = (
    stage: HookEvent["stage"],
    spec: HookSpec,
    call: HookCall,
    outcome: HookEvent["outcome"],
    message: string,
  ): HookEvent => ({
    type: "hook",
    stage,
    hook: hookName(spec),
    id: call.id,
    tool: call.tool,
    outcome,
    message,
  });
  return {
    async before(call, signal) {
      const input = payload("before_tool", call);
      for (const spec of config.before_tool.filter((h) => appliesTo(h, call.tool))) {
        const ran = await run(spec.command, input, spec.timeout_s * 1000, signal);
        if (ran.status === "exited" && ran.code === 0) continue;
        const why = ran.status === "exited"
          ? firstLine(ran.stderr) || `it exited with status ${ran.code}`
          : ran.status === "timeout"
          ? `it did not finish within ${spec.timeout_s} s and was stopped`
          : `it could not be run (${escapeLine(ran.message)})`;
        return event(
          "before_tool",
          spec,
          call,
          "vetoed",
          `vetoed by facility hook ${escapeLine(hookName(spec))}: ${why}`,
        );
      }
      return undefined;
    },
    async after(call, signal) {
      const input = payload("after_tool", call, {
        ok: call.ok,
        result_summary: call.summary.slice(0, SUMMARY_CHARS),
      });
      const failed: HookEvent[] = [];
      for (const spec of config.after_tool.filter((h) => appliesTo(h, call.tool))) {
        const ran = await run(spec.command, input, spec.timeout_s * 1000, signal);
        if (ran.status === "exited" && ran.code === 0) continue;
        const why = ran.status === "exited"
          ? `it exited with status ${ran.code}${
            firstLine(ran.stderr) ? `: ${firstLine(ran.stderr)}` : ""
          }`
          : ran.status === "timeout"
          ? `it did not finish within ${spec.timeout_s} s and was stopped`
          : `it could not be run (${escapeLine(ran.message)})`;
        failed.push(
          event(
            "after_tool",
            spec,
            call,
            "failed",
            `facility hook ${escapeLine(hookName(spec))} after ${call.tool} failed: ${why}`,
          ),
        );
      }
      return failed;
    },
  };
}

/** The hook's name: its `name`, else its program's file name. */
export function hookName(spec: HookSpec): string {
  return spec.name ?? spec.command[0]?.split("/").at(-1) ?? "hook";
}

/** Whether the hook is for `tool` (`tools` absent: every tool). */
export function appliesTo(spec: HookSpec, tool: string): boolean {
  return (spec.tools ?? ["*"]).some((glob) => globRegExp(glob).test(tool));
}

function globRegExp(glob: string): RegExp {
  const body = glob.split("").map((c) =>
    c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
  ).join("");
  return new RegExp(`^${body}$`);
}

/** The first non-blank line of `text`, escaped and cut short. */
function firstLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "")?.trim() ?? "";
  return escapeLine(line);
}

/** Control characters (escape sequences, carriage returns…) as `\u00XX`; at most {@link REASON_CHARS}. */
function escapeLine(text: string): string {
  const cut = text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS)}…` : text;
  return [...cut].map((c) => {
    const code = c.charCodeAt(0);
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
    return control ? `\\u${code.toString(16).padStart(4, "0")}` : c;
  }).join("");
}
