/**
 * The tools of accel-agent and their registry.
 *
 * @module
 */
import type { Tool, ToolDeps } from "./define.ts";
import { getParameter } from "./get_parameter.ts";
import { proposePlan } from "./propose_plan.ts";
import { readLog } from "./read_log.ts";
import { type RegistryOptions, ToolRegistry } from "./registry.ts";
import { searchDevice } from "./search_device.ts";

export { defineTool, ToolError } from "./define.ts";
export type { Tool, ToolContext, ToolDeps } from "./define.ts";
export { ToolRegistry } from "./registry.ts";

/** Every tool, in the order the model sees them. */
export const ALL_TOOLS: readonly Tool[] = [getParameter, searchDevice, readLog, proposePlan];

/** The registry of all tools over one control system. */
export function createRegistry(deps: ToolDeps, opts: RegistryOptions): ToolRegistry {
  return new ToolRegistry([...ALL_TOOLS], deps, opts);
}
