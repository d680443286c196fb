/**
 * OpenAI wire shapes: `chat.completion` objects, `chat.completion.chunk` SSE
 * frames and error bodies, built from a message whose templates are resolved.
 *
 * @module
 */

import type { ChatRequest, UsageSpec } from "./scripted_llm_types.ts";

/** A tool call with its id assigned and its arguments final. */
export interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** An assistant message ready to be sent. */
export interface WireMessage {
  text?: string;
  toolCalls: WireToolCall[];
  finishReason: string;
  usage?: UsageSpec;
}

/** Fields every chunk and completion of one response share. */
export interface WireContext {
  id: string;
  created: number;
  model: string;
  req: ChatRequest;
}

/** The `usage` object, from the given counts or estimated at ~4 characters a token. */
export function usageOf(message: WireMessage, req: ChatRequest) {
  const estimate = (chars: number) => Math.max(1, Math.ceil(chars / 4));
  const given = message.usage;
  const prompt_tokens = given?.prompt_tokens ?? estimate(JSON.stringify(req.messages).length);
  const completion_tokens = given?.completion_tokens ??
    estimate(
      (message.text?.length ?? 0) +
        message.toolCalls.reduce((n, call) => n + call.name.length + call.arguments.length, 0),
    );
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** A non-streaming `chat.completion` object. */
export function completionBody(message: WireMessage, ctx: WireContext): unknown {
  const toolCalls = message.toolCalls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    id: ctx.id,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: message.text ?? null,
        refusal: null,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      },
      logprobs: null,
      finish_reason: message.finishReason,
    }],
    usage: usageOf(message, ctx.req),
  };
}

/** Splits text into pieces of `size` characters (code units); none for empty text. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Builds SSE frames (`data: …\n\n`) for one streamed response. */
export class ChunkWriter {
  readonly #ctx: WireContext;
  readonly #includeUsage: boolean;

  constructor(ctx: WireContext) {
    this.#ctx = ctx;
    this.#includeUsage = ctx.req.stream_options?.include_usage === true;
  }

  /** A frame holding one choice delta (and `finish_reason`, null until the end). */
  delta(delta: Record<string, unknown>, finishReason: string | null = null): string {
    return this.#frame([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]);
  }

  /** The opening frame: the assistant role. */
  role(withText: boolean): string {
    return this.delta({ role: "assistant", content: withText ? "" : null, refusal: null });
  }

  /** Frames for text, `size` characters each. */
  text(text: string, size: number): string[] {
    return pieces(text, size).map((piece) => this.delta({ content: piece }));
  }

  /**
   * Frames for one tool call the way OpenAI sends them: the first carries index,
   * id, type, name and empty arguments; the rest carry argument pieces and the index.
   */
  toolCall(index: number, call: WireToolCall, size: number, limit = Infinity): string[] {
    const head = this.delta({
      tool_calls: [{
        index,
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: "" },
      }],
    });
    const args = pieces(call.arguments.slice(0, limit), size).map((piece) =>
      this.delta({ tool_calls: [{ index, function: { arguments: piece } }] })
    );
    return [head, ...args];
  }

  /** Every frame of a complete message, ending with `[DONE]`. */
  message(message: WireMessage, size: number): string[] {
    const frames = [this.role(message.text !== undefined)];
    if (message.text) frames.push(...this.text(message.text, size));
    message.toolCalls.forEach((call, i) => frames.push(...this.toolCall(i, call, size)));
    frames.push(this.delta({}, message.finishReason));
    if (this.#includeUsage) {
      frames.push(this.#frame([], usageOf(message, this.#ctx.req)));
    }
    frames.push("data: [DONE]\n\n");
    return frames;
  }

  #frame(choices: unknown[], usage?: unknown): string {
    const { id, created, model } = this.#ctx;
    const chunk: Record<string, unknown> = {
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices,
    };
    if (this.#includeUsage) chunk.usage = usage ?? null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}

/** An OpenAI-shaped error body. */
export function errorBody(
  message: string,
  type: string,
  code: string | null = null,
): { error: { message: string; type: string; param: null; code: string | null } } {
  return { error: { message, type, param: null, code } };
}
