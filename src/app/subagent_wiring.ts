/**
 * Loads the sub-agent definitions (the built-in ones beside the program, then
 * `[agents] dir`, which may add or replace by name) and builds the manager
 * with the tools each run may have.
 *
 * @module
 */
import type { ToolHooks } from "../agent/hooks.ts";
import type { CallCaps } from "../agent/call_caps.ts";
import { type AgentDefinition, parseAgentDefinition } from "../agent/subagents/definition.ts";
import { TreeBudget } from "../agent/subagents/budget.ts";
import { SubagentManager } from "../agent/subagents/manager.ts";
import type { ModelClient } from "../llm/types.ts";
import type { Tool, ToolDeps } from "../tools/define.ts";
import type { RegistryOptions } from "../tools/registry.ts";
import { buildSubagentTools, subagentMayUse } from "../tools/subagent_tools.ts";
import { CliError, Exit } from "./exit.ts";
import { errorMessage } from "../util/errors.ts";
import { isRefusal, MAX_DEFINITION_BYTES, readRegularText } from "../util/bounded_read.ts";

/** The built-in definitions shipped with the program. */
export const BUILTIN_AGENTS_URL = new URL("../../configs/agents/", import.meta.url);

/**
 * Reads every `*.md` of the directories in order (later ones replace earlier
 * ones by name). A definition naming an unknown tool, or one a sub-agent may
 * never hold, is a usage error (exit 2).
 */
export async function loadAgentDefinitions(
  dirs: string[],
  catalogue: readonly Tool[],
): Promise<AgentDefinition[]> {
  const byName = new Map<string, AgentDefinition>();
  for (const dir of dirs) {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(dir)) {
        // Not only regular files: a link is followed, and a FIFO or a device is refused by name.
        if (!e.isDirectory && e.name.endsWith(".md")) names.push(e.name);
      }
    } catch (e) {
      throw new CliError(`agents dir ${dir}: cannot read it (${errorMessage(e)})`, Exit.USAGE);
    }
    for (const n of names.sort()) {
      const path = `${dir.replace(/\/$/, "")}/${n}`;
      let def: AgentDefinition;
      try {
        const text = await readRegularText(path, MAX_DEFINITION_BYTES, {
          fix: "an agent definition is a Markdown file in the agents directory",
        });
        def = parseAgentDefinition(text, path);
      } catch (e) {
        if (isRefusal(e)) throw new CliError(`agent definition ${e.message}`, Exit.USAGE);
        if (e instanceof SyntaxError) {
          throw new CliError(`agent definition ${e.message}`, Exit.USAGE);
        }
        throw e;
      }
      for (const t of def.tools) {
        const tool = catalogue.find((c) => c.name === t);
        if (!tool) throw new CliError(`${path}: unknown tool ${t}`, Exit.USAGE);
        if (!subagentMayUse(tool)) {
          throw new CliError(`${path}: ${t} is not read-only; sub-agents only read`, Exit.USAGE);
        }
      }
      byName.set(def.name, def);
    }
  }
  return [...byName.values()];
}

export interface SubagentWiring {
  definitions: AgentDefinition[];
  catalogue: readonly Tool[];
  deps: ToolDeps;
  registry: RegistryOptions;
  modelFor(name: string): Promise<ModelClient>;
  boundModel?: string;
  hooks?: ToolHooks;
  keepFullResult?: (callId: string, text: string) => Promise<string>;
  toolCalls?: CallCaps;
  maxTreeTurns: number;
  maxTreeTokens: number;
}

/** The session's sub-agent manager. */
export function createSubagentManager(w: SubagentWiring): SubagentManager {
  const manager: SubagentManager = new SubagentManager({
    definitions: w.definitions,
    buildTools: (ctx) =>
      buildSubagentTools(ctx, {
        catalogue: w.catalogue,
        deps: w.deps,
        registry: w.registry,
        manager,
      }),
    modelFor: w.modelFor,
    boundModel: w.boundModel,
    hooks: w.hooks,
    keepFullResult: w.keepFullResult,
    toolCalls: w.toolCalls,
    budget: new TreeBudget(w.maxTreeTurns, w.maxTreeTokens),
    now: () => Date.now(),
  });
  return manager;
}
