/**
 * The model-facing types of accel-agent. They mirror the OpenAI chat format
 * closely but belong to us, so no SDK type leaves `src/llm`.
 *
 * @module
 */

/** A tool call the model asked for; `arguments` is the raw JSON text it produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  /** `steered`: typed by the operator while a turn ran (see `src/agent/steer.ts`). */
  | { role: "user"; content: string; steered?: true }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string };

/** A tool as offered to the model: a JSON schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Token counts of one model call, or summed over several. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** Sums two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  temperature?: number;
}

/** The complete answer of one model call. */
export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  /** "stop", "tool_calls", "length", "content_filter", … as the endpoint said. */
  finishReason: string;
  /** The model id that answered, as the endpoint reported it. */
  model: string;
}

/** What a model call reports while it runs. */
export type ModelEvent =
  | { type: "text"; delta: string }
  | {
    type: "retry";
    attempt: number;
    delayMs: number;
    reason: string;
    /** True when text of the failed attempt was already reported and is now void. */
    discardedText: boolean;
  }
  | { type: "done"; response: ModelResponse };

/** Anything that can answer a chat: the OpenAI-compatible client, or a fake in tests. */
export interface ModelClient {
  /** The configured name (what prices are kept under) and the model id sent to the endpoint. */
  readonly name: string;
  readonly model: string;
  readonly contextWindow?: number;
  /**
   * Runs one model call with retries. Yields text deltas as they stream and
   * ends with exactly one `done` event, or throws an {@link LlmError}.
   */
  complete(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent, void, undefined>;
}
