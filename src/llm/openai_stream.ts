/**
 * A streamed chat completion assembled from its chunks: the text as it
 * grows, tool calls whose names and arguments arrive in pieces, usage and
 * the finish reason; and the refusal of a stream that ended without one (cut
 * short, however complete it reads).
 *
 * @module
 */
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { LlmError } from "./errors.ts";
import { estimateUsage, toUsage } from "./openai_request.ts";
import type { ModelRequest, ModelResponse, ToolCall, Usage } from "./types.ts";

/** Assembles streamed chunks into text and whole tool calls. */
export class StreamAccumulator {
  text = "";
  /** Null until the endpoint says why it stopped. */
  finishReason: string | null = null;
  usage?: Usage;
  model: string;
  #calls = new Map<number, ToolCall>();

  constructor(model: string) {
    this.model = model;
  }

  /** Chunks received. */
  chunks = 0;

  /** Adds a chunk; returns its text delta, if any. */
  add(chunk: ChatCompletionChunk): string {
    this.chunks++;
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = toUsage(chunk.usage) ?? this.usage;
    let delta = "";
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) delta += choice.delta.content;
      for (const tc of choice.delta?.tool_calls ?? []) {
        let call = this.#calls.get(tc.index);
        if (!call) {
          call = { id: tc.id ?? `call_${tc.index}`, name: "", arguments: "" };
          this.#calls.set(tc.index, call);
        }
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name += tc.function.name;
        if (tc.function?.arguments) call.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    this.text += delta;
    return delta;
  }

  /** The whole response; throws when the stream ended without a finish reason. */
  finish(request: ModelRequest): ModelResponse {
    const toolCalls = [...this.#calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    // A stream that closes without a finish reason was cut short (by a proxy, a restarted
    // endpoint): what arrived is no answer, however complete it reads.
    if (this.finishReason === null) {
      throw new LlmError(
        "stream",
        toolCalls.some((c) => !parses(c.arguments))
          ? "model response ended in the middle of a tool call"
          : `model response was cut off: the stream ended without a finish reason after ${this.text.length} characters`,
      );
    }
    return {
      text: this.text,
      toolCalls,
      usage: this.usage ?? estimateUsage(request, this.text, toolCalls),
      finishReason: this.finishReason ?? "stop",
      model: this.model,
    };
  }
}

function parses(json: string): boolean {
  if (json.trim() === "") return true;
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}
