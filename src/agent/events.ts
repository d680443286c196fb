/**
 * Everything the agent loop tells the outside world. The terminal renderer,
 * `--stream-json`, `--json` and the tests all consume this one union.
 *
 * @module
 */
import type { ModelEvent, ToolCall, Usage } from "../llm/types.ts";
import type { LlmErrorKind } from "../llm/errors.ts";
import type { PlanEvent } from "../plan/service.ts";

export type { Usage };

/** The assistant message a model call produced, as the session keeps it. */
export interface MessageEnd {
  type: "message_end";
  /** The message's text (empty when it only called tools). */
  text: string;
  toolCalls: ToolCall[];
  /** Tokens of the call, when the endpoint reported them (else estimated, see `Usage`). */
  usage: Usage;
  /** "stop", "tool_calls", "length"… as the endpoint said. */
  finishReason: string;
  /** The model id that answered. */
  model: string;
}

/**
 * A hook of the facility stopped a tool call, or failed (see `hooks.ts`).
 * `vetoed`: the call was not run; `failed`: an `after_tool` hook exited
 * nonzero, could not be run or timed out (the call's result stands).
 */
export interface HookEvent {
  type: "hook";
  stage: "before_tool" | "after_tool";
  /** The hook's name (`name` in its config, else its program's file name). */
  hook: string;
  id: string;
  tool: string;
  outcome: "vetoed" | "failed";
  message: string;
}

/**
 * Tool calls of one model message that a cap did not let run (see
 * `call_caps.ts`): each was answered with a result saying so. One event per
 * cap and message, however many calls it refused.
 */
export interface CallsRefusedEvent {
  type: "tool_calls_refused";
  cap: "per_message" | "per_turn";
  /** Calls not run. */
  count: number;
  limit: number;
  /** The setting that holds the cap. */
  key: string;
  message: string;
}

export type AgentEvent =
  /** A turn began: the operator's input is in the session. */
  | { type: "turn_start"; input: string; sessionId: string; turn: number; model: string }
  | { type: "text"; delta: string }
  | MessageEnd
  /** Text the operator typed while the turn ran was given to the model (see `steer.ts`). */
  | { type: "steer_applied"; text: string }
  | HookEvent
  | CallsRefusedEvent
  | { type: "tool_start"; id: string; name: string; args: unknown }
  | {
    type: "tool_end";
    id: string;
    name: string;
    ok: boolean;
    result: unknown;
    ms: number;
    /**
     * Set when the result was cut for the model: where its whole text was
     * saved, or null when it was not (no session directory, or the write failed).
     */
    fullOutput?: string | null;
  }
  | Extract<ModelEvent, { type: "retry" }>
  | PlanEvent
  | { type: "turn_complete"; usage: Usage; model: string }
  /** Older history was summarised; token counts are estimates of the prompt. */
  | { type: "compact"; tokensBefore: number; tokensAfter: number }
  /** A sub-agent started or ended (`parentId` "operator" for the operator's agent). */
  | {
    type: "subagent";
    id: string;
    agent: string;
    parentId: string;
    status: "started" | "done" | "failed" | "cancelled";
  }
  | { type: "cancelled"; reason: string }
  /**
   * The turn failed. `kind` says how, for scripts: an {@link LlmErrorKind}
   * ("too_large", "timeout"…), "turn_deadline", or "tool_calls" (the model
   * kept calling tools past the turn's cap).
   */
  | {
    type: "error";
    message: string;
    retryable: boolean;
    kind?: LlmErrorKind | "turn_deadline" | "tool_calls";
  };

/** Fails to compile when a `switch` over events misses a case. */
export function assertNever(x: never): never {
  throw new TypeError(`unhandled event ${JSON.stringify(x)}`);
}
