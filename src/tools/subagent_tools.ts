/**
 * The tool set of one sub-agent run: its narrowed read-only tools, `return`
 * (checked against the signature), `fail`, and — at level 2 only — the agent
 * tools. No plan path is ever handed over: the tools get the control system
 * for reads and no `plans`, and any tool that is not read-only is dropped.
 *
 * @module
 */
import { z } from "zod";
import type { ToolSet } from "../agent/tools.ts";
import { FORBIDDEN_TOOLS } from "../agent/subagents/definition.ts";
import {
  MAX_LEVEL,
  type SubagentManager,
  type SubagentToolContext,
} from "../agent/subagents/manager.ts";
import { validateSignature } from "../agent/subagents/signature.ts";
import { agentTools } from "./agent_tools.ts";
import { defineTool, type Tool, type ToolDeps, ToolError } from "./define.ts";
import { type RegistryOptions, ToolRegistry } from "./registry.ts";

export interface SubagentToolsOptions {
  /** Every tool there is; a run gets the read-only ones it is allowed. */
  catalogue: readonly Tool[];
  deps: ToolDeps;
  registry: RegistryOptions;
  manager: SubagentManager;
}

const Fail = z.strictObject({
  reason: z.string().min(1).describe("Why the task cannot be done"),
});

/** What `return` and `fail` give the sub-agent: that its run has ended, and how. */
export interface EndResult {
  status: "returned" | "failed";
}

/** Whether a sub-agent may ever hold this tool. */
export function subagentMayUse(tool: Tool): boolean {
  return tool.readOnly && !tool.awaitsCompletion && !FORBIDDEN_TOOLS.has(tool.name);
}

/** Builds the tools of one run (the manager's `buildTools`). */
export function buildSubagentTools(ctx: SubagentToolContext, opts: SubagentToolsOptions): ToolSet {
  const allowed = opts.catalogue.filter((t) => ctx.run.tools.includes(t.name) && subagentMayUse(t));
  const returnTool: Tool<EndResult> = {
    name: "return",
    description:
      "Finish with your result. It must match this schema; if it does not, you are told " +
      "what to fix and may call return again.",
    readOnly: true,
    awaitsCompletion: false,
    schema: z.record(z.string(), z.unknown()),
    parameters: ctx.definition.signature,
    execute(args) {
      const errors = validateSignature(ctx.definition.signature, args);
      if (errors.length) {
        throw new ToolError(
          `the result does not match the signature: ${
            errors.join("; ")
          }. Call return again with a corrected result`,
        );
      }
      ctx.finish(args);
      return Promise.resolve({ status: "returned" });
    },
  };
  const failTool = defineTool<typeof Fail, EndResult>({
    name: "fail",
    description: "Give up: the task cannot be done. Say why, for whoever asked.",
    parameters: Fail,
    readOnly: true,
    execute({ reason }) {
      ctx.fail(reason);
      return Promise.resolve({ status: "failed" });
    },
  });
  const spawning = ctx.run.level < MAX_LEVEL
    ? agentTools(opts.manager, {
      id: ctx.run.id,
      level: ctx.run.level,
      model: () => Promise.resolve(ctx.model),
    })
    : [];
  // Reads only: the control system and the clock; never a plan service.
  const deps: ToolDeps = { cs: opts.deps.cs, now: opts.deps.now };
  return new ToolRegistry([...allowed, ...spawning, returnTool, failTool], deps, opts.registry);
}
