/**
 * Runs sub-agents: each is the same `runTurn` loop with a fresh session, its
 * own narrowed tool set and a model resolved for it, and ends only through
 * its `return` (checked against its signature) or `fail` tool (one run is
 * `run.ts`). The parent sees the final result and nothing of the
 * conversation. Runs may go in the background and in parallel; the manager
 * keeps their records and lineage, waits for, cancels and replaces them, and
 * tells its listeners when one starts or ends. The run types are in
 * `types.ts` and re-exported here.
 *
 * @module
 */
import { ZERO_USAGE } from "../../llm/types.ts";
import { type AgentDefinition, narrowTools } from "./definition.ts";
import { type RunParts, runSubagent } from "./run.ts";
import {
  MAX_LEVEL,
  type RunInfo,
  type Spawner,
  type SpawnRequest,
  type SubagentEvent,
  type SubagentManagerDeps,
} from "./types.ts";
import { sleep } from "../../util/misc.ts";

export {
  MAX_LEVEL,
  type RunInfo,
  type RunStatus,
  type Spawner,
  type SpawnRequest,
  type SubagentEvent,
  type SubagentManagerDeps,
  type SubagentToolContext,
} from "./types.ts";

/** Spawns, lists, waits for and cancels the sub-agent runs of one session. */
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
    // The run's first model call is held before anything is awaited: spawns made together
    // cannot all pass the budget's check before any of them has spent.
    const first = this.#deps.budget.reserve();
    if (typeof first === "string") throw new RangeError(`not started: ${first}`);
    const modelName = def.model ?? req.model ?? this.#deps.boundModel;
    let model;
    try {
      model = modelName ? await this.#deps.modelFor(modelName) : await parent.model();
    } catch (e) {
      first.settle();
      throw e;
    }
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
      { info, def, model, stop, parentSignal, first },
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
    parts: RunParts,
    emit?: (ev: SubagentEvent) => void,
  ): Promise<RunInfo> {
    const { info } = parts;
    await runSubagent(parts, this.#deps);
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
