/**
 * The tool calls of one model message as the loop runs them: consecutive
 * read-only calls form one batch that runs concurrently, any other call runs
 * alone. A batch yields each call's start, the events its tool emits, and
 * its end as it comes, in time linear in the batch's size.
 *
 * @module
 */
import type { AgentEvent } from "./events.ts";
import type { Done, RunCall } from "./tool_call.ts";
import type { ToolOutcome, ToolSet } from "./tools.ts";
import type { ToolCall } from "../llm/types.ts";

/** Consecutive read-only calls form one concurrent batch; any other call runs alone. */
export function batches(calls: ToolCall[], tools: ToolSet): ToolCall[][] {
  const out: ToolCall[][] = [];
  let current: ToolCall[] = [];
  for (const call of calls) {
    if (tools.isReadOnly(call.name)) {
      current.push(call);
      continue;
    }
    if (current.length) out.push(current);
    current = [];
    out.push([call]);
  }
  if (current.length) out.push(current);
  return out;
}

/** Runs one batch; each call's outcome goes into `outcomes`. */
export async function* runBatch(
  batch: ToolCall[],
  tools: ToolSet,
  signal: AbortSignal,
  runCall: RunCall,
  outcomes: Map<string, ToolOutcome>,
): AsyncGenerator<AgentEvent> {
  const pending = new Set<string>();
  // Events a tool emits while it runs (plan progress…), passed out in order; calls as they end.
  const queue: AgentEvent[] = [];
  const finished: Done[] = [];
  let failure: { error: unknown } | undefined;
  const bell = new Bell();
  const emit = (ev: AgentEvent) => {
    queue.push(ev);
    bell.ring();
  };
  for (const call of batch) {
    yield {
      type: "tool_start",
      id: call.id,
      name: call.name,
      args: tools.previewArgs(call.name, call.arguments),
    };
    pending.add(call.id);
    runCall(call, signal, emit).then((done) => finished.push(done), (error) => {
      failure ??= { error };
    }).finally(() => bell.ring());
  }
  const onAbort = () => bell.ring();
  signal.addEventListener("abort", onAbort, { once: true });
  let abandoned = false;
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift() as AgentEvent;
      if (failure) throw failure.error;
      if (signal.aborted && !abandoned) {
        // A tool that ignores the signal must not hold the turn; one that
        // changes the machine is waited for, since it stops and restores itself.
        abandoned = true;
        for (const call of batch) if (!tools.awaitsCompletion(call.name)) pending.delete(call.id);
      }
      while (finished.length > 0) {
        const done = finished.shift() as Done;
        // An abandoned call's late end is not reported.
        if (!pending.delete(done.call.id)) continue;
        outcomes.set(done.call.id, done.outcome);
        // Events the call emitted as it ended (hooks) come before its end.
        while (queue.length > 0) yield queue.shift() as AgentEvent;
        yield {
          type: "tool_end",
          id: done.call.id,
          name: done.call.name,
          ok: done.outcome.ok,
          result: done.outcome.result,
          ms: Math.round(done.ms * 10) / 10,
          ...(done.fullOutput !== undefined ? { fullOutput: done.fullOutput } : {}),
        };
      }
      if (pending.size === 0 && queue.length === 0) return;
      if (queue.length === 0) await bell.wait();
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Wakes one waiter, or the next one to wait when nobody waits yet (no ring is lost). */
class Bell {
  #rung = false;
  #waiter: (() => void) | undefined;

  ring(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter();
    else this.#rung = true;
  }

  wait(): Promise<void> {
    if (this.#rung) {
      this.#rung = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiter = resolve);
  }
}
