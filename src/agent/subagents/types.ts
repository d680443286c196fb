/**
 * The contracts of sub-agent runs: a run's record as the parent and the
 * operator see it ({@link RunInfo}), what spawns one and how, what the
 * tool-set builder learns about it, what the manager depends on, and the
 * events a run's start and end send.
 *
 * @module
 */
import type { ModelClient, Usage } from "../../llm/types.ts";
import type { ToolSet } from "../tools.ts";
import type { ToolHooks } from "../hooks.ts";
import type { CallCaps } from "../call_caps.ts";
import type { AgentEvent } from "../events.ts";
import type { AgentDefinition } from "./definition.ts";
import type { TreeBudget } from "./budget.ts";
import type { Timers } from "../../util/misc.ts";

export type RunStatus = "running" | "done" | "failed" | "cancelled";

/** What the parent and the operator see of a run. */
export interface RunInfo {
  id: string;
  agent: string;
  /** The spawner: "operator" for the operator's agent, else a run id. */
  parentId: string;
  /** 2 for children of the operator's agent, 3 for theirs. */
  level: number;
  task: string;
  background: boolean;
  status: RunStatus;
  /** The model that runs it (configured name). */
  model: string;
  /** The tools it was given, after narrowing. */
  tools: string[];
  turns: number;
  tokens: number;
  /** Tokens in and out, to price them at the model's prices; absent in runs saved before it was kept. */
  usage?: Usage;
  /** The value given to `return`, valid against the signature. */
  result?: unknown;
  /** Why it failed or was cancelled. */
  error?: string;
  startedAt: number;
  endedAt?: number;
}

/** What the tool-set builder learns about the run it equips. */
export interface SubagentToolContext {
  run: Readonly<RunInfo>;
  definition: AgentDefinition;
  /** The run's model, inherited by its children. */
  model: ModelClient;
  /** Ends the run with a result (the caller has validated it). */
  finish(result: unknown): void;
  /** Ends the run as failed. */
  fail(reason: string): void;
}

/** What the manager is given: the definitions, the tool-set builder, models, budget and clocks. */
export interface SubagentManagerDeps {
  definitions: readonly AgentDefinition[];
  /** The tools of a run: its allowed tools, `return`, `fail`, and spawning at level 2. */
  buildTools(ctx: SubagentToolContext): ToolSet;
  /** A client for a named model of the configuration. */
  modelFor(name: string): Promise<ModelClient>;
  budget: TreeBudget;
  /** A model for runs whose definition and spawn name none (`[agents] model`). */
  boundModel?: string;
  /** The facility's hooks around tool calls: a sub-agent's calls pass them as the operator's do. */
  hooks?: ToolHooks;
  /**
   * Keeps the whole text of a result cut for a sub-agent (see
   * `TurnOptions.keepFullResult`); the call id it is given starts with the run's id.
   */
  keepFullResult?: (callId: string, text: string) => Promise<string>;
  /** Caps on the tool calls of a run's messages and turns, as the operator's agent has. */
  toolCalls?: CallCaps;
  /** Milliseconds since the epoch. */
  now(): number;
  newId?(): string;
  /** The clock of run time-outs and of `wait`; tests pass fake ones. Default: real timers. */
  timers?: Timers;
}

/** Who spawns: the operator's agent (level 1) or a sub-agent. */
export interface Spawner {
  id: string;
  level: number;
  /** The spawner's own model, inherited when neither the definition nor the spawn names one. */
  model(): Promise<ModelClient>;
}

export interface SpawnRequest {
  agent: string;
  task: string;
  background?: boolean;
  /** Narrows the definition's tools; a name outside them is refused. */
  allowTools?: string[];
  denyTools?: string[];
  /** A model bound at spawn, used unless the definition names its own. */
  model?: string;
  /** Cancels a foreground run (the parent's turn). Background runs outlive it. */
  signal?: AbortSignal;
  /** The parent turn's event stream: the start, and the end of a foreground run. */
  emit?: (ev: SubagentEvent) => void;
}

/** A run started or ended. */
export type SubagentEvent = Extract<AgentEvent, { type: "subagent" }>;

/** The deepest level; agents there never get spawn_subagent. */
export const MAX_LEVEL = 3;
