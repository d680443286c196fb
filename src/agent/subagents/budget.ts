/**
 * Budgets of the agent tree. Turns (model calls that answered) and tokens are
 * shared by every sub-agent of a session; each agent also has its own
 * `max_turns`. Infrastructure failures are retried inside the model client
 * under its own retry budget and cost no turns.
 *
 * A model call is reserved before it is made, in one synchronous step that
 * checks and counts it, so sub-agents spawned together cannot all pass the
 * check before any of them has spent: at most `maxTurns` calls are ever
 * made or in flight. A spawn reserves its run's first call before the run
 * starts, and is refused when none is left.
 *
 * @module
 */
import { LlmError } from "../../llm/errors.ts";
import type { ModelClient, ModelEvent, ModelRequest, Usage } from "../../llm/types.ts";

/** One model call held against the tree's budget until it is settled. */
export class Reservation {
  #settled = false;
  constructor(readonly budget: TreeBudget, readonly epoch: number) {}

  /**
   * Ends the hold: with the call's usage it is charged (a call that
   * answered); without, it is given back (the call failed or never ran).
   * A second settle does nothing.
   */
  settle(usage?: Usage): void {
    if (this.#settled) return;
    this.#settled = true;
    this.budget.release(this, usage);
  }
}

/** The turn and token budget shared across a tree of agents. */
export class TreeBudget {
  turns = 0;
  tokens = 0;
  /** Counts resets: a call that began before one belongs to the session before it. */
  epoch = 0;
  /** Calls reserved and not yet settled (in flight, or a spawned run's first). */
  reserved = 0;
  constructor(readonly maxTurns: number, readonly maxTokens: number) {}

  /** Why no further model call may be made, or undefined while one may. */
  exhausted(): string | undefined {
    if (this.turns + this.reserved >= this.maxTurns) {
      return `the agent tree's budget of ${this.maxTurns} model calls is used up`;
    }
    if (this.tokens >= this.maxTokens) {
      return `the agent tree's budget of ${this.maxTokens} tokens is used up`;
    }
    return undefined;
  }

  /** Holds one model call, or says why none is left; checking and counting are one step. */
  reserve(): Reservation | string {
    const why = this.exhausted();
    if (why) return why;
    this.reserved++;
    return new Reservation(this, this.epoch);
  }

  /** Called by {@link Reservation.settle}. */
  release(r: Reservation, usage?: Usage): void {
    // A hold from before a reset belongs to the session before it.
    if (r.epoch !== this.epoch) return;
    this.reserved = Math.max(0, this.reserved - 1);
    if (usage) this.charge(usage);
  }

  charge(u: Usage): void {
    this.turns++;
    this.tokens += u.totalTokens;
  }

  /** Starts over from what a session had already spent (another session is resumed). */
  reset(turns: number, tokens: number): void {
    this.turns = turns;
    this.tokens = tokens;
    this.reserved = 0;
    this.epoch++;
  }
}

/**
 * Wraps a model so each call is reserved against the tree's budget first and
 * charged to it after; `onCall` sees each call's usage (the agent's own count).
 * `first` is a call reserved already (at spawn), used by the first call.
 * When the budget is used up the call aborts `stop` with the reason.
 */
export function budgetedModel(
  inner: ModelClient,
  budget: TreeBudget,
  stop: AbortController,
  onCall: (u: Usage) => void,
  first?: Reservation,
): ModelClient {
  let held = first;
  return {
    name: inner.name,
    model: inner.model,
    contextWindow: inner.contextWindow,
    async *complete(req: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
      const reservation = held ?? budget.reserve();
      held = undefined;
      if (typeof reservation === "string") {
        stop.abort(new Error(reservation));
        throw new LlmError("aborted", reservation);
      }
      try {
        for await (const ev of inner.complete(req, signal)) {
          if (ev.type === "done") {
            reservation.settle(ev.response.usage);
            onCall(ev.response.usage);
          }
          yield ev;
        }
      } finally {
        reservation.settle();
      }
    },
  };
}
