/**
 * Budgets of the agent tree. Turns (model calls that answered) and tokens are
 * shared by every sub-agent of a session; each agent also has its own
 * `max_turns`. Infrastructure failures are retried inside the model client
 * under its own retry budget and cost no turns.
 *
 * @module
 */
import { LlmError } from "../../llm/errors.ts";
import type { ModelClient, ModelEvent, ModelRequest, Usage } from "../../llm/types.ts";

/** The turn and token budget shared across a tree of agents. */
export class TreeBudget {
  turns = 0;
  tokens = 0;
  /** Counts resets: a call that began before one belongs to the session before it. */
  epoch = 0;
  constructor(readonly maxTurns: number, readonly maxTokens: number) {}

  /** Why no further model call may be made, or undefined while one may. */
  exhausted(): string | undefined {
    if (this.turns >= this.maxTurns) {
      return `the agent tree's budget of ${this.maxTurns} model calls is used up`;
    }
    if (this.tokens >= this.maxTokens) {
      return `the agent tree's budget of ${this.maxTokens} tokens is used up`;
    }
    return undefined;
  }

  charge(u: Usage): void {
    this.turns++;
    this.tokens += u.totalTokens;
  }

  /** Starts over from what a session had already spent (another session is resumed). */
  reset(turns: number, tokens: number): void {
    this.turns = turns;
    this.tokens = tokens;
    this.epoch++;
  }
}

/**
 * Wraps a model so each call is checked against the tree's budget first and
 * charged to it after; `onCall` sees each call's usage (the agent's own count).
 * When the budget is used up the call aborts `stop` with the reason.
 */
export function budgetedModel(
  inner: ModelClient,
  budget: TreeBudget,
  stop: AbortController,
  onCall: (u: Usage) => void,
): ModelClient {
  return {
    name: inner.name,
    model: inner.model,
    contextWindow: inner.contextWindow,
    async *complete(req: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
      const why = budget.exhausted();
      if (why) {
        stop.abort(new Error(why));
        throw new LlmError("aborted", why);
      }
      const epoch = budget.epoch;
      for await (const ev of inner.complete(req, signal)) {
        if (ev.type === "done") {
          // A call still in flight when another session was resumed is not that session's.
          if (budget.epoch === epoch) budget.charge(ev.response.usage);
          onCall(ev.response.usage);
        }
        yield ev;
      }
    },
  };
}
