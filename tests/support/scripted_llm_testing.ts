/**
 * Small helpers for the scripted server's own tests: an SDK client pointed at it
 * and the reassembly of a chunk stream into what the model said.
 *
 * @module
 */

import OpenAI from "openai";

type ChatCompletionChunk = OpenAI.ChatCompletionChunk;

/** A client with retries off, as the harness tests use it. */
export function clientFor(url: string): OpenAI {
  return new OpenAI({ baseURL: url, apiKey: "test", maxRetries: 0 });
}

/** A tool call reassembled from its deltas. */
export interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

/** What a streamed response said, reassembled. */
export interface Assembled {
  text: string;
  toolCalls: AssembledCall[];
  finishReason: string | null;
  chunks: ChatCompletionChunk[];
}

/** Reads a stream to its end, gathering text and tool-call deltas by index. */
export async function assemble(stream: AsyncIterable<ChatCompletionChunk>): Promise<Assembled> {
  const out: Assembled = { text: "", toolCalls: [], finishReason: null, chunks: [] };
  for await (const chunk of stream) addChunk(out, chunk);
  return out;
}

/** Folds one chunk into `out`. */
export function addChunk(out: Assembled, chunk: ChatCompletionChunk): void {
  out.chunks.push(chunk);
  const choice = chunk.choices[0];
  if (!choice) return;
  out.text += choice.delta.content ?? "";
  for (const delta of choice.delta.tool_calls ?? []) {
    const call = out.toolCalls[delta.index] ??= { id: "", name: "", arguments: "" };
    call.id ||= delta.id ?? "";
    call.name += delta.function?.name ?? "";
    call.arguments += delta.function?.arguments ?? "";
  }
  out.finishReason = choice.finish_reason ?? out.finishReason;
}

/** The error a promise rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
