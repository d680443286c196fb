/**
 * Everything the agent loop tells the outside world. The terminal renderer,
 * `--stream-json`, `--json` and the tests all consume this one union.
 *
 * @module
 */
import type { ModelEvent, Usage } from "../llm/types.ts";
import type { LlmErrorKind } from "../llm/errors.ts";
import type { PlanEvent } from "../plan/service.ts";

export type { Usage };

export type AgentEvent =
  | { type: "text"; delta: string }
  | { type: "tool_start"; id: string; name: string; args: unknown }
  | {
    type: "tool_end";
    id: string;
    name: string;
    ok: boolean;
    result: unknown;
    ms: number;
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
   * ("too_large", "timeout"…) or "turn_deadline".
   */
  | { type: "error"; message: string; retryable: boolean; kind?: LlmErrorKind | "turn_deadline" };

/** Fails to compile when a `switch` over events misses a case. */
export function assertNever(x: never): never {
  throw new TypeError(`unhandled event ${JSON.stringify(x)}`);
}
