/**
 * Sub-agents against the scripted model server: the real OpenAI client, the
 * real tools over a spied simulator, the shipped agent definitions, and a
 * parent (level 1) whose plan path approves anything — so only the sub-agent
 * wiring stands between a sub-agent and a write.
 *
 * @module
 */
import type { AgentEvent } from "../../../src/agent/events.ts";
import type { ToolHooks } from "../../../src/agent/hooks.ts";
import { runTurn } from "../../../src/agent/loop.ts";
import { Session } from "../../../src/agent/session.ts";
import { SubagentManager } from "../../../src/agent/subagents/manager.ts";
import { createSubagentManager, loadAgentDefinitions } from "../../../src/app/subagent_wiring.ts";
import { createOpenAiClient } from "../../../src/llm/openai_client.ts";
import type { ModelClient } from "../../../src/llm/types.ts";
import { agentTools } from "../../../src/tools/agent_tools.ts";
import { ALL_TOOLS, ToolRegistry } from "../../../src/tools/mod.ts";
import { ApproveAll, fixture } from "../../plan/fixture.ts";
import type { ChatMessage, ChatRequest, Respond } from "../../support/scripted_llm.ts";

export const AGENTS_DIR = new URL("../../../configs/agents/", import.meta.url).pathname;
const REGISTRY = { maxOutputChars: 20_000, timeoutMs: 10_000 };

export function client(url: string, name = "main", retries = 0): ModelClient {
  return createOpenAiClient({
    name,
    model: "scripted",
    baseUrl: url,
    apiKey: "test",
    stream: true,
    retry: { maxRetries: retries, baseMs: 1, maxMs: 1 },
    requestTimeoutMs: 10_000,
    idleTimeoutMs: 10_000,
  });
}

export async function setup(
  url: string,
  opts: { maxTreeTurns?: number; retries?: number; hooks?: ToolHooks } = {},
) {
  const definitions = await loadAgentDefinitions([AGENTS_DIR], ALL_TOOLS);
  // Disposing the result (`await using t = await setup(…)`) removes the fixture's directory.
  const f = await fixture();
  const model = client(url, "main", opts.retries);
  const manager: SubagentManager = createSubagentManager({
    definitions,
    catalogue: ALL_TOOLS,
    deps: { cs: f.cs, now: () => f.clock.now() },
    registry: REGISTRY,
    modelFor: (name) => Promise.resolve(client(url, name)),
    maxTreeTurns: opts.maxTreeTurns ?? 100,
    maxTreeTokens: 1_000_000,
    hooks: opts.hooks,
  });
  const approver = new ApproveAll();
  const tools = new ToolRegistry(
    [
      ...ALL_TOOLS,
      ...agentTools(manager, { id: "operator", level: 1, model: () => Promise.resolve(model) }),
    ],
    { cs: f.cs, now: () => f.clock.now(), plans: { service: f.service, approver } },
    REGISTRY,
  );
  const subagentEvents: AgentEvent[] = [];
  manager.subscribe((ev) => subagentEvents.push(ev));
  const session = new Session("parent", 0);
  async function ask(input: string, signal = new AbortController().signal) {
    const events: AgentEvent[] = [];
    for await (
      const ev of runTurn({
        session,
        input,
        model,
        tools,
        systemPrompt: "You are the operator's assistant.",
        maxIterations: 10,
        signal,
      })
    ) events.push(ev);
    return events;
  }
  return { ...f, manager, tools, session, ask, approver, subagentEvents };
}

/** Who is asking: the parent, or a sub-agent by its prompt's first words and its task. */
export interface Who {
  agent: "parent" | "device_search" | "log_analysis" | "diagnostics";
  task: string;
  /** Assistant messages so far: 0 on the first call. */
  step: number;
  lastTool: string;
  messages: ChatMessage[];
}

export function who(req: ChatRequest): Who {
  const text = (m: ChatMessage | undefined) =>
    typeof m?.content === "string"
      ? m.content
      : (m?.content ?? []).map((p) => p.text ?? "").join("");
  const system = text(req.messages.find((m) => m.role === "system"));
  const agent = system.startsWith("You are a device-search")
    ? "device_search"
    : system.startsWith("You analyse")
    ? "log_analysis"
    : system.startsWith("You diagnose")
    ? "diagnostics"
    : "parent";
  return {
    agent,
    task: text(req.messages.find((m) => m.role === "user")),
    step: req.messages.filter((m) => m.role === "assistant").length,
    lastTool: text(req.messages.findLast((m) => m.role === "tool")),
    messages: req.messages,
  };
}

/** A scenario whose every turn is the same router. */
export function routed(n: number, route: (w: Who, req: ChatRequest) => Respond) {
  return { turns: Array.from({ length: n }, () => (req: ChatRequest) => route(who(req), req)) };
}

export function call(name: string, args: Record<string, unknown>, id?: string) {
  return { toolCalls: [{ name, arguments: args, ...(id ? { id } : {}) }] };
}
