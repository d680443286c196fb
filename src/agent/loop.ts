/**
 * One ReAct turn: ask the model, run the tools it calls, give it the results,
 * repeat until it answers without tools. A plain async generator with every
 * effect injected; it yields {@link AgentEvent}s and keeps the session valid
 * whatever happens (cancellation, model failure, tool failure).
 *
 * @module
 */
import type { AgentEvent } from "./events.ts";
import type { ToolHooks } from "./hooks.ts";
import { callRunner, type Done, type RunCall } from "./tool_call.ts";
import type { Session } from "./session.ts";
import type { ToolOutcome, ToolSet } from "./tools.ts";
import { LlmError } from "../llm/errors.ts";
import {
  addUsage,
  type ChatMessage,
  type ModelClient,
  type ModelResponse,
  type ToolCall,
  type Usage,
  ZERO_USAGE,
} from "../llm/types.ts";

export interface TurnOptions {
  session: Session;
  input: string;
  model: ModelClient;
  tools: ToolSet;
  /** Built for each turn so changes to context files show up. */
  systemPrompt: string;
  /** Model calls allowed in one turn. */
  maxIterations: number;
  signal: AbortSignal;
  /** Milliseconds clock, for tool durations. */
  now?: () => number;
  /**
   * Wall-clock limit of the turn's model calls: past it the call in flight
   * is stopped and the turn ends with a `turn_deadline` error, however
   * slowly the endpoint keeps sending. A tool call that is running is left
   * to its own limits (a plan is never cut mid-write by this); the turn
   * ends before the next model call. `key` is the config key named in the
   * message.
   */
  deadline?: { ms: number; key: string };
  /**
   * Called before every model call; may shorten the session (see
   * `compaction.ts`) and returns the `compact` event when it did.
   */
  compact?: (session: Session, systemPrompt: string, signal: AbortSignal) => Promise<
    AgentEvent | undefined
  >;
  /** Facility hooks around each tool call (see `hooks.ts`); none when absent. */
  hooks?: ToolHooks;
  /**
   * Keeps the whole text of a result that was cut for the model (in the
   * session's directory, as `tool-results/<call id>.txt`) and resolves to
   * where it is; rejects when it cannot. Absent when the run has no session
   * directory: the model is then told the whole was not kept.
   */
  keepFullResult?: (callId: string, text: string) => Promise<string>;
}

/** The text the model reads for a tool call that was cancelled. */
export const CANCELLED_RESULT = "cancelled by the operator before it finished";

/**
 * Runs one turn. The user's input is added to the session at once; assistant
 * and tool messages are added only as complete pairs, so a cancelled or failed
 * turn leaves a conversation the model can continue.
 */
export async function* runTurn(opts: TurnOptions): AsyncGenerator<AgentEvent, void, undefined> {
  const { session, model, tools, signal } = opts;
  const now = opts.now ?? (() => performance.now());
  session.messages.push({ role: "user", content: opts.input });
  session.turns++;
  yield {
    type: "turn_start",
    input: opts.input,
    sessionId: session.id,
    turn: session.turns,
    model: model.model,
  };
  let usage: Usage = { ...ZERO_USAGE };
  let answeredBy = model.model;
  const deadline = opts.deadline ? AbortSignal.timeout(opts.deadline.ms) : undefined;
  const modelSignal = deadline ? AbortSignal.any([signal, deadline]) : signal;
  const pastDeadline = () => deadline?.aborted === true && !signal.aborted;

  for (let iteration = 0; iteration < opts.maxIterations; iteration++) {
    if (signal.aborted) return yield cancelled(signal);
    if (pastDeadline()) return yield deadlineError(opts.deadline);
    const steered = session.steering.take();
    if (steered.length > 0) {
      const text = steered.join("\n");
      session.messages.push({ role: "user", content: text, steered: true });
      yield { type: "steer_applied", text };
    }
    let compacted: AgentEvent | undefined;
    try {
      compacted = await opts.compact?.(session, opts.systemPrompt, modelSignal);
    } catch (e) {
      if (pastDeadline()) return yield deadlineError(opts.deadline);
      throw e;
    }
    if (compacted) yield compacted;
    let response: ModelResponse | undefined;
    try {
      const messages: ChatMessage[] = [
        { role: "system", content: opts.systemPrompt },
        ...session.messages,
      ];
      for await (const ev of model.complete({ messages, tools: tools.specs() }, modelSignal)) {
        if (ev.type === "text") yield { type: "text", delta: ev.delta };
        else if (ev.type === "retry") yield { ...ev };
        else response = ev.response;
      }
    } catch (e) {
      if (pastDeadline()) return yield deadlineError(opts.deadline);
      if (signal.aborted || (e instanceof LlmError && e.kind === "aborted")) {
        return yield cancelled(signal);
      }
      if (e instanceof LlmError) {
        return yield { type: "error", message: e.message, retryable: e.retryable, kind: e.kind };
      }
      throw e;
    }
    if (!response) throw new Error("model client ended without a response");
    usage = addUsage(usage, response.usage);
    // Priced by the configured name: `response.model` is the endpoint's id.
    session.addUsage(response.usage, model.name);
    answeredBy = response.model;
    const calls = uniqueIds(response.toolCalls);
    yield {
      type: "message_end",
      text: response.text,
      toolCalls: calls,
      usage: response.usage,
      finishReason: response.finishReason,
      model: response.model,
    };

    if (calls.length === 0) {
      session.messages.push({ role: "assistant", content: response.text });
      const cut = CUT_REASONS[response.finishReason];
      // An answer the endpoint stopped short is no answer, however complete it reads.
      if (cut) return yield { type: "error", message: cut, retryable: false };
      return yield { type: "turn_complete", usage, model: answeredBy };
    }

    const outcomes = new Map<string, ToolOutcome>();
    const call = callRunner(opts, now);
    try {
      for (const batch of batches(calls, tools)) {
        yield* runBatch(batch, tools, signal, call, outcomes);
        if (signal.aborted) break;
      }
    } finally {
      // Always answer every call the model made, so the conversation stays valid.
      session.messages.push({ role: "assistant", content: response.text, toolCalls: calls });
      for (const call of calls) {
        const outcome = outcomes.get(call.id);
        session.messages.push({
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content: outcome?.content ?? CANCELLED_RESULT,
        });
      }
    }
    if (signal.aborted) return yield cancelled(signal);
  }
  yield {
    type: "error",
    message:
      `stopped after ${opts.maxIterations} model calls without a final answer; raise [agent] max_iterations or ask a narrower question`,
    retryable: false,
  };
}

function deadlineError(d: TurnOptions["deadline"]): AgentEvent {
  const s = (d?.ms ?? 0) / 1000;
  const took = s >= 60 && s % 60 === 0 ? `${s / 60} min` : `${s} s`;
  return {
    type: "error",
    message: `the turn passed its ${took} deadline (${
      d?.key ?? "turn deadline"
    }): the model was still answering; ask again, ask a narrower question or raise the limit`,
    retryable: false,
    kind: "turn_deadline",
  };
}

/** Finish reasons that mean the endpoint stopped the answer before the model did. */
const CUT_REASONS: Readonly<Record<string, string>> = {
  length:
    'the model\'s answer was cut off at its output token limit (finish reason "length"); the answer is incomplete',
  content_filter:
    "the model's answer was cut off by the endpoint's content filter (finish reason \"content_filter\"); the answer is incomplete",
};

function cancelled(signal: AbortSignal): AgentEvent {
  const reason = signal.reason instanceof Error
    ? signal.reason.message
    : String(signal.reason ?? "");
  return { type: "cancelled", reason: reason || "cancelled by the operator" };
}

/** Models sometimes repeat or omit ids; every call needs its own for its result. */
function uniqueIds(calls: ToolCall[]): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((c, i) => {
    let id = c.id || `call_${i}`;
    while (seen.has(id)) id = `${id}_${i}`;
    seen.add(id);
    return id === c.id ? c : { ...c, id };
  });
}

/** Consecutive read-only calls form one concurrent batch; any other call runs alone. */
function batches(calls: ToolCall[], tools: ToolSet): ToolCall[][] {
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

async function* runBatch(
  batch: ToolCall[],
  tools: ToolSet,
  signal: AbortSignal,
  runCall: RunCall,
  outcomes: Map<string, ToolOutcome>,
): AsyncGenerator<AgentEvent> {
  const pending = new Map<string, Promise<Done>>();
  // Events a tool emits while it runs (plan progress…), passed out in order.
  const queue: AgentEvent[] = [];
  let wake: () => void = () => {};
  const emit = (ev: AgentEvent) => {
    queue.push(ev);
    wake();
  };
  for (const call of batch) {
    yield {
      type: "tool_start",
      id: call.id,
      name: call.name,
      args: tools.previewArgs(call.name, call.arguments),
    };
    pending.set(call.id, runCall(call, signal, emit));
  }
  const aborted = new Promise<"aborted">((resolve) => {
    if (signal.aborted) resolve("aborted");
    signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  let abandoned = false;
  while (pending.size > 0 || queue.length > 0) {
    while (queue.length > 0) yield queue.shift() as AgentEvent;
    if (pending.size === 0) break;
    const woke = new Promise<"wake">((resolve) => (wake = () => resolve("wake")));
    const done = await Promise.race([...pending.values(), woke, ...(abandoned ? [] : [aborted])]);
    if (done === "wake") continue;
    if (done === "aborted") {
      // A tool that ignores the signal must not hold the turn; one that
      // changes the machine is waited for, since it stops and restores itself.
      abandoned = true;
      for (const call of batch) if (!tools.awaitsCompletion(call.name)) pending.delete(call.id);
      continue;
    }
    pending.delete(done.call.id);
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
}
