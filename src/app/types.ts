/**
 * What every command is given: the {@link App} (configuration, control
 * system, tools, plans, the session and its turn), the steering queue the
 * REPL fills, and a resumed session.
 *
 * @module
 */
import type { ControlReader } from "../adapters/adapter.ts";
import type { ContextFile } from "../agent/context.ts";
import type { AgentEvent } from "../agent/events.ts";
import type { Session } from "../agent/session.ts";
import type { RunInfo, SubagentManager } from "../agent/subagents/manager.ts";
import type { LoadedConfig, ResolvedModel } from "../config/mod.ts";
import type { DeviceIndexService } from "../index/service.ts";
import type { ModelClient } from "../llm/types.ts";
import type { Profile } from "../profiles/profile.ts";
import type { SandboxDeps } from "../sandbox/mod.ts";
import type { Skill } from "../skills/skill.ts";
import type { OperatorChannel } from "../tools/ask_user.ts";
import type { ToolRegistry } from "../tools/mod.ts";
import type { PlanPath } from "./plan_wiring.ts";
import type { SavedSession, SessionStore } from "./session_store.ts";

export interface App {
  loaded: LoadedConfig;
  /** The control system as everything but the plan service sees it: it cannot write. */
  cs: ControlReader;
  /** The device index of the backend (informal search, `index refresh|stats`); absent when it has none. */
  devices?: DeviceIndexService;
  tools: ToolRegistry;
  /** The change path; set `plans.approver` for the mode (terminal, hash, none). */
  plans: PlanPath;
  /** Absolute state directory (history, audit, plans, work). */
  stateDir: string;
  session: Session;
  /** The Python sandbox (the REPL and ask prewarm it). */
  sandbox: SandboxDeps;
  /** Sub-agents of this session (spawned by the operator's agent and theirs). */
  agents: SubagentManager;
  /** Who answers `ask_user`: the REPL sets the terminal; undefined means nobody (one-shot). */
  operator?: OperatorChannel;
  /** What the agent may do here (observer, operator, sim-eval). */
  profile: Profile;
  /** Skills that can be triggered by the operator's words. */
  skills: Skill[];
  /** Skills active for this conversation (matched by a question so far, or by `input`). */
  activeSkills(input?: string): Skill[];
  /** Where sessions are saved as they go (`<state dir>/sessions`). */
  sessions: SessionStore;
  /**
   * Continues a saved session (undefined: the newest) in place of the current
   * one, with exactly its own sub-agent runs. Sub-agents of the session left
   * that are still running are cancelled (see {@link SubagentManager.replace})
   * and their end recorded in that session's file; resuming the session
   * already in use keeps its running sub-agents.
   */
  resume(id?: string): Promise<Resumed>;
  /** Compacts the conversation now (`/compact`); undefined when there was nothing to compact. */
  compact(signal: AbortSignal): Promise<Extract<AgentEvent, { type: "compact" }> | undefined>;
  /** The context window of the current model (configured, else `[agent] context_window`). */
  contextWindow(): number;
  /** The model in use; see {@link App.switchModel}. */
  modelInfo: ResolvedModel;
  /** Creates (once) the client for the current model; throws CliError when unconfigured. */
  model(): Promise<ModelClient>;
  /** Throws CliError saying what to set when the current model cannot be called. */
  checkModel(): void;
  switchModel(name: string): ResolvedModel;
  systemPrompt(): Promise<string>;
  /**
   * Steering: what the operator types while a turn runs is pushed here and
   * given to the model at the turn's next step; `take()` returns what no step
   * took before the turn ended (the REPL sends it as the next question).
   * Absent where the agent loop cannot take it (a test's app): the REPL
   * then keeps the text and sends it once the turn ends.
   */
  steering?: Steering;
  /** Runs one turn of the session with the current model, tools and system prompt. */
  turn(input: string, signal: AbortSignal): AsyncGenerator<AgentEvent, void, undefined>;
  /** Files that make up the context, for /context. */
  contextFiles(): Promise<ContextFile[]>;
  close(): Promise<void>;
}

/** Lines the operator typed during a turn, waiting for the agent's next step. */
export interface Steering {
  /** Queues `text` (blank text is ignored). */
  push(text: string): void;
  /** Everything queued, oldest first, leaving the queue empty. */
  take(): string[];
}

/** A session resumed, and the sub-agents of the one left that were cancelled for it. */
export interface Resumed extends SavedSession {
  cancelled: RunInfo[];
}

/**
 * `loaded` and `controlSystem`, when given, replace the configuration file and
 * the configured backend (an evaluation attempt builds both itself).
 */
