/**
 * What each tool returns, by name, for the code that reads tool results
 * (the terminal, `ask --json`, the direct commands, the eval recorder). The
 * types come from the tools' own declarations, so a consumer and the tool
 * it reads cannot drift apart unnoticed.
 *
 * @module
 */
import type { Tool } from "./define.ts";
import type { TruncatedResult } from "./full_output.ts";
import type { AgentCancelResult, AgentListResult, RunView, SpawnResult } from "./agent_tools.ts";
import type { askUserTool } from "./ask_user.ts";
import type { executeCode } from "./execute_code.ts";
import type { getParameter } from "./get_parameter.ts";
import type { LaunchDisplayResult } from "./launch_display.ts";
import type { PlotResult } from "./plot.ts";
import type { listScriptsTool } from "./list_scripts.ts";
import type { proposePlan } from "./propose_plan.ts";
import type { predictEffect } from "./predict_effect.ts";
import type { readLog } from "./read_log.ts";
import type { runScript } from "./run_script.ts";
import type { searchDevice } from "./search_device.ts";
import type { EndResult } from "./subagent_tools.ts";

/** The result type a tool declared. */
export type ResultOf<T> = T extends Tool<infer R> ? R : never;

/** Each tool's declared result, by the name the model calls it by. */
export interface ToolResults {
  get_parameter: ResultOf<typeof getParameter>;
  search_device: ResultOf<typeof searchDevice>;
  read_log: ResultOf<typeof readLog>;
  propose_plan: ResultOf<typeof proposePlan>;
  predict_effect: ResultOf<typeof predictEffect>;
  execute_code: ResultOf<typeof executeCode>;
  run_script: ResultOf<typeof runScript>;
  list_scripts: ResultOf<typeof listScriptsTool>;
  ask_user: ResultOf<ReturnType<typeof askUserTool>>;
  spawn_subagent: SpawnResult;
  agent_status: RunView;
  agent_list: AgentListResult;
  agent_cancel: AgentCancelResult;
  return: EndResult;
  fail: EndResult;
  launch_display: LaunchDisplayResult;
  plot: PlotResult;
}

/** A tool with a declared result. */
export type ToolName = keyof ToolResults;

/** A finished call as events (`tool_end`) and registry outcomes carry it. */
export interface FinishedCall {
  name: string;
  ok: boolean;
  result: unknown;
}

/**
 * The whole result of a call of tool `name`, typed as that tool declared it;
 * undefined when the call is of another tool, failed (its result is then
 * `{ error }`), or was cut for the model (see {@link cutResult}).
 *
 * The registry hands on exactly what the named tool's `execute` resolved to,
 * and `defineTool` makes that the declared type, so the narrowing here is
 * the one place the name stands for the type.
 *
 * @example
 * ```ts
 * const plan = resultOf("propose_plan", ev);
 * if (plan?.status === "preflight_failed") console.log(plan.violations);
 * ```
 */
export function resultOf<N extends ToolName>(
  name: N,
  call: FinishedCall,
): ToolResults[N] | undefined {
  if (call.name !== name || !call.ok || cutResult(call)) return undefined;
  return call.result as ToolResults[N];
}

/** The stand-in events carry when the model read the result cut (its scalars kept). */
export function cutResult(call: FinishedCall): TruncatedResult | undefined {
  const r = call.result;
  if (r === null || typeof r !== "object" || !("truncated" in r) || !("excerpt" in r)) {
    return undefined;
  }
  const t = r.truncated;
  return typeof r.excerpt === "string" && t !== null && typeof t === "object" && "chars" in t
    ? r as TruncatedResult
    : undefined;
}

/**
 * The whole result of a registry call of `name` made by the operator's own
 * command (`get`, `scripts run`…): what the tool returned, not the model's
 * excerpt; undefined when the call failed.
 */
export function wholeResult<N extends ToolName>(
  name: N,
  outcome: { ok: boolean; result: unknown; fullResult?: unknown },
): ToolResults[N] | undefined {
  return resultOf(name, { name, ok: outcome.ok, result: outcome.fullResult ?? outcome.result });
}
