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
import { callRunner } from "./tool_call.ts";
import { batches, runBatch } from "./batch.ts";
import { ModelWait } from "./model_wait.ts";
import { admitCalls, type CallCaps } from "./call_caps.ts";
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
   * Time the turn may spend waiting for the model (its model calls and
   * compaction, on the wall clock): past it the call in flight is stopped
   * and the turn ends with a `turn_deadline` error, however slowly the
   * endpoint keeps sending. The time its tools run (a plan, an approval at
   * the prompt) is not counted, and a running tool is never cut by it.
   * `key` is the config key named in the message.
   */
  deadline?: { ms: number; key: string };
  /** Caps on the tool calls run per message and per turn (see `call_caps.ts`); none when absent. */
  toolCalls?: CallCaps;
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
  const scope = { turn: `${session.id}#${session.turns}` };
  const waited = new ModelWait(opts.deadline?.ms);
  let ranThisTurn = 0;
  let turnCapHit = false;

  for (let iteration = 0; iteration < opts.maxIterations; iteration++) {
    if (signal.aborted) return yield cancelled(signal);
    if (waited.spent()) return yield deadlineError(opts.deadline);
    const steered = session.steering.take();
    if (steered.length > 0) {
      const text = steered.join("\n");
      session.messages.push({ role: "user", content: text, steered: true });
      yield { type: "steer_applied", text };
    }
    const wait = waited.begin(signal);
    let response: ModelResponse | undefined;
    try {
      const compacted = await opts.compact?.(session, opts.systemPrompt, wait.signal);
      if (compacted) yield compacted;
      const messages: ChatMessage[] = [
        { role: "system", content: opts.systemPrompt },
        ...session.messages,
      ];
      for await (const ev of model.complete({ messages, tools: tools.specs() }, wait.signal)) {
        if (ev.type === "text") yield { type: "text", delta: ev.delta };
        else if (ev.type === "retry") yield { ...ev };
        else response = ev.response;
      }
    } catch (e) {
      if (wait.past()) return yield deadlineError(opts.deadline);
      if (signal.aborted || (e instanceof LlmError && e.kind === "aborted")) {
        return yield cancelled(signal);
      }
      if (e instanceof LlmError) {
        return yield { type: "error", message: e.message, retryable: e.retryable, kind: e.kind };
      }
      throw e;
    } finally {
      wait.end();
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
    const admitted = opts.toolCalls
      ? admitCalls(calls, opts.toolCalls, ranThisTurn)
      : { run: calls, refused: [] };
    ranThisTurn += admitted.run.length;
    const pastTurnCap = admitted.refused.some((r) => r.cap === "per_turn");
    const call = callRunner({ ...opts, scope }, now);
    try {
      for (const r of admitted.refused) {
        const error = r.result;
        for (const c of r.listed) {
          outcomes.set(c.id, {
            ok: false,
            content: JSON.stringify({ error }),
            result: { error },
            args: c.arguments,
          });
        }
        yield {
          type: "tool_calls_refused",
          cap: r.cap,
          count: r.calls.length,
          limit: r.limit,
          key: r.key,
          message: r.message,
        };
      }
      for (const batch of batches(admitted.run, tools)) {
        yield* runBatch(batch, tools, signal, call, outcomes);
        if (signal.aborted) break;
      }
    } finally {
      // Always answer every call the message keeps, so the conversation stays valid.
      const kept = admitted.refused.length === 0 ? calls : keptCalls(calls, admitted);
      session.messages.push({ role: "assistant", content: response.text, toolCalls: kept });
      for (const call of kept) {
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
    if (pastTurnCap && turnCapHit) {
      // Told once that the turn's calls are spent, the model asked for more: end the turn.
      const key = opts.toolCalls?.keys?.perTurn ?? "[agent] max_tool_calls_per_turn";
      return yield {
        type: "error",
        message:
          `stopped: the model kept calling tools after the turn had run its ${opts.toolCalls?.perTurn} (${key}); ask a narrower question or raise the limit`,
        retryable: false,
        kind: "tool_calls",
      };
    }
    turnCapHit ||= pastTurnCap;
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

/** The calls a message keeps in the session: those run, and the refused ones listed. */
function keptCalls(calls: ToolCall[], admitted: ReturnType<typeof admitCalls>): ToolCall[] {
  const ids = new Set(
    [...admitted.run, ...admitted.refused.flatMap((r) => r.listed)].map((c) => c.id),
  );
  return calls.filter((c) => ids.has(c.id));
}
