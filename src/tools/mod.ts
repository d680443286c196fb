/**
 * The tools of accel-agent and their registry.
 *
 * @module
 */
import type { Tool, ToolDeps } from "./define.ts";
import { getParameter } from "./get_parameter.ts";
import { proposePlan } from "./propose_plan.ts";
import { predictEffect } from "./predict_effect.ts";
import { executeCode } from "./execute_code.ts";
import { listScriptsTool } from "./list_scripts.ts";
import { runScript } from "./run_script.ts";
import { readLog } from "./read_log.ts";
import { type RegistryOptions, ToolRegistry } from "./registry.ts";
import { searchDevice } from "./search_device.ts";
import { launchDisplayTool } from "./launch_display.ts";
import { plotTool } from "./plot.ts";

export { defineTool, ToolError } from "./define.ts";
export type { Tool, ToolContext, ToolDeps } from "./define.ts";
export { ToolRegistry } from "./registry.ts";

/** Every tool, in the order the model sees them. */
export const ALL_TOOLS: readonly Tool[] = [
  getParameter,
  searchDevice,
  readLog,
  proposePlan,
  predictEffect,
];

/** The Python sandbox's tools, offered when the sandbox is on. */
export const SANDBOX_TOOLS: readonly Tool[] = [executeCode, runScript, listScriptsTool];

/** Every tool including the sandbox's, for the schema snapshot. */
export const EVERY_TOOL: readonly Tool[] = [
  ...ALL_TOOLS,
  ...SANDBOX_TOOLS,
  // The operator's console tools; the app builds them over its catalogue (src/app/features.ts).
  launchDisplayTool(),
  plotTool(),
];

/** The registry of all tools over one control system. */
export function createRegistry(deps: ToolDeps, opts: RegistryOptions): ToolRegistry {
  return new ToolRegistry([...ALL_TOOLS, ...(deps.sandbox ? SANDBOX_TOOLS : [])], deps, opts);
}
