/**
 * Runs sub-agents: each is the same {@link runTurn} loop with a fresh session,
 * its own narrowed tool set and a model resolved for it, and ends only through
 * its `return` (checked against its signature) or `fail` tool. The parent
 * sees the final result and nothing of the conversation. Runs may go in the
 * background and in parallel; the manager keeps their lineage.
 *
 * @module
 */
import type { ToolSet } from "../tools.ts";
import { addUsage, type ModelClient, type Usage, ZERO_USAGE } from "../../llm/types.ts";
import { runTurn } from "../loop.ts";
import { Session } from "../session.ts";
import type { ToolHooks } from "../hooks.ts";
import type { AgentEvent } from "../events.ts";
import { type AgentDefinition, FORBIDDEN_TOOLS } from "./definition.ts";
import { budgetedModel, type TreeBudget } from "./budget.ts";
import { errorMessage } from "../../util/errors.ts";
import { sleep, timeoutSignal, type Timers } from "../../util/misc.ts";

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

const FINISH_NUDGE =
  "You have not finished. Call `return` with a result that matches the signature, or `fail` with the reason.";

export class SubagentManager {
  readonly #deps: SubagentManagerDeps;
  readonly #defs: Map<string, AgentDefinition>;
  readonly #runs = new Map<
    string,
    { info: RunInfo; done: Promise<RunInfo>; stop: AbortController }
  >();
  readonly #listeners = new Set<(ev: SubagentEvent) => void>();
  #seq = 0;

  constructor(deps: SubagentManagerDeps) {
    this.#deps = deps;
    this.#defs = new Map(deps.definitions.map((d) => [d.name, d]));
  }

  definitions(): AgentDefinition[] {
    return [...this.#defs.values()];
  }

  /** Hears every run start and end (the REPL's notices). Returns the unsubscribe function. */
  subscribe(listener: (ev: SubagentEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Starts a run. Foreground: resolves when it ends. Background: resolves at
   * once with the running run. Throws RangeError when the request is refused
   * (unknown agent, too deep, widening the tools).
   */
  async spawn(parent: Spawner, req: SpawnRequest): Promise<RunInfo> {
    if (parent.level >= MAX_LEVEL) {
      throw new RangeError(`a level-${parent.level} agent cannot spawn sub-agents`);
    }
    const def = this.#defs.get(req.agent);
    if (!def) {
      throw new RangeError(
        `no agent "${req.agent}"; the agents are ${[...this.#defs.keys()].join(", ")}`,
      );
    }
    const tools = narrowTools(def, req.allowTools, req.denyTools);
    const modelName = def.model ?? req.model ?? this.#deps.boundModel;
    const model = modelName ? await this.#deps.modelFor(modelName) : await parent.model();
    const id = this.#deps.newId?.() ?? `agent-${++this.#seq}`;
    const info: RunInfo = {
      id,
      agent: def.name,
      parentId: parent.id,
      level: parent.level + 1,
      task: req.task,
      background: req.background ?? false,
      status: "running",
      model: modelName ?? model.name,
      tools,
      turns: 0,
      tokens: 0,
      usage: { ...ZERO_USAGE },
      startedAt: this.#deps.now(),
    };
    const stop = new AbortController();
    const parentSignal = info.background ? undefined : req.signal;
    const done = this.#run(
      info,
      def,
      model,
      stop,
      parentSignal,
      info.background ? undefined : req.emit,
    );
    this.#runs.set(id, { info, done, stop });
    this.#emit(info, req.emit);
    return info.background ? { ...info } : await done;
  }

  get(id: string): RunInfo | undefined {
    const r = this.#runs.get(id);
    return r ? { ...r.info } : undefined;
  }

  list(): RunInfo[] {
    return [...this.#runs.values()].map((r) => ({ ...r.info }));
  }

  /** Waits up to `ms` for a run to end; returns it as it is then. */
  async wait(id: string, ms: number): Promise<RunInfo | undefined> {
    const r = this.#runs.get(id);
    if (!r) return undefined;
    const waited = new AbortController();
    await Promise.race([r.done, sleep(ms, waited.signal, this.#deps.timers).catch(() => {})]);
    waited.abort();
    return { ...r.info };
  }

  /** Cancels a run and its descendants; false when it is unknown or already over. */
  cancel(id: string, reason = "cancelled"): boolean {
    const r = this.#runs.get(id);
    if (!r || r.info.status !== "running") return false;
    for (const child of this.list()) if (child.parentId === id) this.cancel(child.id, reason);
    r.stop.abort(new Error(reason));
    return true;
  }

  /** Cancels every running run (leaving the program). */
  cancelAll(reason: string): void {
    for (const r of this.list()) this.cancel(r.id, reason);
  }

  /**
   * Replaces every run with those of a resumed session, so what is listed
   * (and so counted) is exactly that session's runs. Runs saved while
   * running end here as cancelled: the process that ran them is gone.
   *
   * Runs still running belong to the session being left. With `cancelReason`
   * they are cancelled rather than left to run: nobody would see them, yet
   * they would keep spending the shared tree budget. Each stops at its next
   * await; it is marked cancelled now, and its end reaches no listener (its
   * record belongs to the session it ran for, not the one resumed). Without
   * `cancelReason` (the same session read again) they are kept. Returns the
   * runs cancelled, for the caller to record and announce.
   *
   * Run ids keep counting up from the highest seen, so no new run takes the
   * id of one that is still stopping. The tree's budget is the session's:
   * on another session it starts from what that session's runs had spent.
   */
  replace(runs: RunInfo[], cancelReason?: string): RunInfo[] {
    const running = [...this.#runs.values()].filter((r) => r.info.status === "running");
    this.#runs.clear();
    if (cancelReason === undefined) {
      for (const r of running) this.#runs.set(r.info.id, r);
    } else {
      for (const r of running) {
        Object.assign(r.info, {
          status: "cancelled",
          error: cancelReason,
          endedAt: this.#deps.now(),
        });
        r.stop.abort(new Error(cancelReason));
      }
    }
    for (const info of runs) {
      if (info.status === "running") {
        info.status = "cancelled";
        info.error = "the session ended before it finished";
      }
      this.#runs.set(info.id, { info, done: Promise.resolve(info), stop: new AbortController() });
      const n = /^agent-(\d+)$/.exec(info.id);
      if (n) this.#seq = Math.max(this.#seq, Number(n[1]));
    }
    if (cancelReason !== undefined) {
      this.#deps.budget.reset(
        runs.reduce((n, r) => n + r.turns, 0),
        runs.reduce((n, r) => n + r.tokens, 0),
      );
    }
    return cancelReason === undefined ? [] : running.map((r) => ({ ...r.info }));
  }

  async #run(
    info: RunInfo,
    def: AgentDefinition,
    model: ModelClient,
    stop: AbortController,
    parentSignal?: AbortSignal,
    emit?: (ev: SubagentEvent) => void,
  ): Promise<RunInfo> {
    const finished = new AbortController();
    const overBudget = new AbortController();
    const timeout = timeoutSignal(def.timeoutMs, this.#deps.timers);
    const signal = AbortSignal.any([
      stop.signal,
      overBudget.signal,
      timeout,
      ...(parentSignal ? [parentSignal] : []),
    ]);
    const end = (status: RunStatus, fields: Partial<RunInfo>) => {
      if (info.status !== "running") return;
      Object.assign(info, fields, { status, endedAt: this.#deps.now() });
      finished.abort(new Error(`the agent ended: ${status}`));
    };
    const tools = this.#deps.buildTools({
      run: info,
      definition: def,
      model,
      finish: (result) => end("done", { result }),
      fail: (reason) => end("failed", { error: reason }),
    });
    const counted = budgetedModel(model, this.#deps.budget, overBudget, (u) => {
      info.turns++;
      info.tokens += u.totalTokens;
      info.usage = addUsage(info.usage ?? ZERO_USAGE, u);
    });
    const session = new Session(info.id, info.startedAt);
    const systemPrompt =
      `${def.prompt}\n\nFinish by calling \`return\` with a result matching this ` +
      `JSON schema: ${
        JSON.stringify(def.signature)
      }; or call \`fail\` with the reason when the task ` +
      `cannot be done. Nobody reads your text answers, only what you return.`;
    let input = info.task;
    try {
      while (info.status === "running") {
        const left = def.maxTurns - info.turns;
        if (left <= 0) {
          end("failed", { error: `used its ${def.maxTurns} turns without calling return` });
          break;
        }
        for await (
          const ev of runTurn({
            session,
            input,
            model: counted,
            tools,
            systemPrompt,
            maxIterations: left,
            signal: AbortSignal.any([signal, finished.signal]),
            hooks: this.#deps.hooks,
            keepFullResult: keepFor(info.id, this.#deps.keepFullResult),
          })
        ) {
          if (info.status !== "running") break;
          if (ev.type === "cancelled") {
            if (overBudget.signal.aborted) end("failed", { error: reasonOf(overBudget.signal) });
            else if (timeout.aborted && !stop.signal.aborted) {
              end("failed", { error: `timed out after ${def.timeoutMs / 1000} s` });
            } else {
              end("cancelled", { error: stop.signal.aborted ? reasonOf(stop.signal) : ev.reason });
            }
          } else if (ev.type === "error" && info.turns < def.maxTurns) {
            // (At max_turns the loop's own error is replaced by the clearer one above.)
            end("failed", { error: ev.message });
          }
        }
        input = FINISH_NUDGE;
      }
    } catch (e) {
      end("failed", { error: `internal error: ${errorMessage(e)}` });
    }
    // A run dropped by `replace` is no longer this session's: only its own parent hears its end.
    this.#emit(info, emit, this.#runs.get(info.id)?.info === info);
    return { ...info };
  }

  #emit(info: RunInfo, emit?: (ev: SubagentEvent) => void, listeners = true): void {
    const status = info.status === "running" ? "started" : info.status;
    const ev: SubagentEvent = {
      type: "subagent",
      id: info.id,
      agent: info.agent,
      parentId: info.parentId,
      status,
    };
    emit?.(ev);
    if (listeners) { for (const l of this.#listeners) l(ev); }
  }
}

/**
 * The tools of a run: the definition's allow list, narrowed by the spawn's
 * allow list, minus both deny lists and every forbidden tool. A spawn that
 * names a tool outside the definition is refused: spawning never widens.
 */
export function narrowTools(def: AgentDefinition, allow?: string[], deny?: string[]): string[] {
  if (allow) {
    const wider = allow.filter((t) => !def.tools.includes(t));
    if (wider.length) {
      throw new RangeError(
        `allow_tools may only narrow ${def.name}'s tools (${def.tools.join(", ")}); not allowed: ${
          wider.join(", ")
        }`,
      );
    }
  }
  const denied = new Set([...def.deny, ...(deny ?? []), ...FORBIDDEN_TOOLS]);
  return (allow ?? def.tools).filter((t) => !denied.has(t));
}

function reasonOf(signal: AbortSignal): string {
  const r = signal.reason;
  return errorMessage(r ?? "cancelled");
}

/** A run's writer of whole results: its call ids prefixed by the run's, as the parent's may be the same. */
function keepFor(
  runId: string,
  keep: SubagentManagerDeps["keepFullResult"],
): SubagentManagerDeps["keepFullResult"] {
  return keep && ((callId, text) => keep(`${runId}-${callId}`, text));
}
