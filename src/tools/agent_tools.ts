/**
 * `spawn_subagent`, `agent_status`, `agent_list`, `agent_cancel`: how an agent
 * delegates to sub-agents and manages them. Built per spawner (its id and
 * level), so each agent sees and cancels only its own descendants.
 *
 * @module
 */
import { z } from "zod";
import type { RunInfo, RunStatus, Spawner, SubagentManager } from "../agent/subagents/manager.ts";
import { defineTool, type Tool, ToolError } from "./define.ts";

const Spawn = z.strictObject({
  agent: z.string().min(1).describe("Name of the sub-agent (see the list in this description)"),
  task: z.string().min(1).describe(
    "Everything the sub-agent needs to know: it sees nothing of this conversation",
  ),
  background: z.boolean().default(false).describe(
    "true: return an id at once and run in the background (poll with agent_status); " +
      "false: wait for the result",
  ),
  allow_tools: z.array(z.string()).optional().describe(
    "Only these of the agent's tools (narrows, never widens)",
  ),
  deny_tools: z.array(z.string()).optional().describe("None of these tools"),
  model: z.string().optional().describe(
    "A configured model name for it, unless its definition names one (default: yours)",
  ),
});

const Status = z.strictObject({
  id: z.string().min(1).describe("The id spawn_subagent returned"),
  wait_seconds: z.number().min(0).max(120).default(0).describe(
    "Wait up to this long for it to finish before answering",
  ),
});

const Cancel = z.strictObject({
  id: z.string().min(1).describe("The id of a running sub-agent"),
});

/** What the model reads of a run (`agent_status`, and `spawn_subagent` when it waited). */
export interface RunView {
  id: string;
  agent: string;
  parent_id: string;
  level: number;
  status: RunStatus;
  /** The value the sub-agent returned, valid against its signature; only when done. */
  result?: unknown;
  error?: string;
  turns: number;
  tokens: number;
}

/** What `spawn_subagent` returns: the run, or its id while it runs in the background. */
export type SpawnResult = RunView | { id: string; agent: string; status: "running"; note: string };

/** What `agent_list` returns. */
export interface AgentListResult {
  agents: (RunView & { task: string })[];
}

/** What `agent_cancel` returns: whether it was running, and its status once stopped. */
export interface AgentCancelResult {
  id: string;
  cancelled: boolean;
  status: RunStatus | undefined;
}

const NoArguments = z.strictObject({});

/** Where the text of a sub-agent's result comes from, as the model is told. */
const SUBAGENT_TEXT = "sub-agents, which may quote facility services";

/** What the model reads of a run. */
export function runView(r: RunInfo): RunView {
  return {
    id: r.id,
    agent: r.agent,
    parent_id: r.parentId,
    level: r.level,
    status: r.status,
    ...(r.status === "done" ? { result: r.result } : {}),
    ...(r.error ? { error: r.error } : {}),
    turns: r.turns,
    tokens: r.tokens,
  };
}

/** The four agent tools for one spawner. */
export function agentTools(manager: SubagentManager, spawner: Spawner): Tool[] {
  const visible = (id: string): RunInfo | undefined => {
    const run = manager.get(id);
    if (!run) return undefined;
    if (spawner.id === "operator") return run;
    for (let r: RunInfo | undefined = run; r; r = manager.get(r.parentId)) {
      if (r.parentId === spawner.id) return run;
    }
    return undefined;
  };
  const find = (id: string): RunInfo => {
    const run = visible(id);
    if (!run) throw new ToolError(`no sub-agent "${id}" of yours; agent_list shows them`);
    return run;
  };
  const agents = manager.definitions().map((d) => `- ${d.name}: ${d.description}`).join("\n");

  const spawn = defineTool<typeof Spawn, SpawnResult>({
    name: "spawn_subagent",
    description:
      `Delegate a read-only task to a sub-agent with a fresh conversation. It returns a typed result; ` +
      `sub-agents can never change the machine. Several may run in parallel (background: true).\n` +
      `Agents:\n${agents}`,
    parameters: Spawn,
    readOnly: true,
    outsideText: SUBAGENT_TEXT,
    async execute(a, { signal, emit }) {
      try {
        const run = await manager.spawn(spawner, {
          agent: a.agent,
          task: a.task,
          background: a.background,
          allowTools: a.allow_tools,
          denyTools: a.deny_tools,
          model: a.model,
          signal,
          emit,
        });
        return run.status === "running"
          ? { id: run.id, agent: run.agent, status: "running", note: "poll it with agent_status" }
          : runView(run);
      } catch (e) {
        if (e instanceof RangeError) throw new ToolError(e.message);
        throw e;
      }
    },
  });

  const status = defineTool<typeof Status, RunView>({
    name: "agent_status",
    description: "The status of a sub-agent, and its result once it has finished.",
    parameters: Status,
    readOnly: true,
    outsideText: SUBAGENT_TEXT,
    async execute({ id, wait_seconds }, { signal }) {
      find(id);
      if (wait_seconds > 0) {
        const waited = manager.wait(id, wait_seconds * 1000);
        const aborted = new Promise<never>((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true })
        );
        await Promise.race([waited, aborted]);
      }
      return runView(find(id));
    },
  });

  const list = defineTool<typeof NoArguments, AgentListResult>({
    name: "agent_list",
    description: "Your sub-agents (and theirs) with their status and lineage.",
    parameters: NoArguments,
    readOnly: true,
    outsideText: SUBAGENT_TEXT,
    execute: () =>
      Promise.resolve({
        agents: manager.list().filter((r) => visible(r.id)).map((r) => ({
          ...runView(r),
          task: r.task,
        })),
      }),
  });

  const cancel = defineTool<typeof Cancel, AgentCancelResult>({
    name: "agent_cancel",
    description: "Cancel a running sub-agent and its own sub-agents.",
    parameters: Cancel,
    readOnly: true,
    async execute({ id }) {
      find(id);
      const cancelled = manager.cancel(id, `cancelled by ${spawner.id}`);
      // A run stops at its next await; report it as it is once it has.
      const run = await manager.wait(id, 5_000);
      return { id, cancelled, status: run?.status };
    },
  });

  return [spawn, status, list, cancel];
}
