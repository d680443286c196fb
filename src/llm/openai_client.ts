/**
 * The one module that imports `openai`: a {@link ModelClient} for any
 * OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LiteLLM). It streams chat
 * completions, assembles tool calls from deltas, falls back to non-streaming
 * when an endpoint refuses to stream tools, and retries with backoff on our
 * own budget (the SDK's retries are off).
 *
 * @module
 */
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import {
  bytesExceededIn,
  cappedFetch,
  kindForStatus,
  LlmError,
  type LlmErrorKind,
  parseRetryAfter,
} from "./errors.ts";
import { backoffMs, type RetryPolicy, sleep } from "./retry.ts";
import type { Timers } from "../util/misc.ts";
import type {
  ChatMessage,
  ModelClient,
  ModelEvent,
  ModelRequest,
  ModelResponse,
  ToolCall,
  Usage,
} from "./types.ts";
import { errorMessage } from "../util/errors.ts";

export interface OpenAiClientOptions {
  /** Name the operator uses for this model. */
  name: string;
  /** Model id sent to the endpoint. */
  model: string;
  /** Endpoint base URL; empty means api.openai.com. */
  baseUrl: string;
  apiKey: string;
  stream: boolean;
  contextWindow?: number;
  temperature?: number;
  retry: RetryPolicy;
  /** Time allowed until the response starts. */
  requestTimeoutMs: number;
  /** Time allowed between two streamed chunks. */
  idleTimeoutMs: number;
  /** Bytes one response may carry (streamed or not); past it the call fails as `too_large`. */
  maxResponseBytes?: number;
  /** Random source for jitter (tests pass a fixed one). */
  random?: () => number;
  /** The timers the waits between retries run on (tests pass a manual clock's). */
  timers?: Timers;
}

class IdleTimeout extends Error {}

/** Creates a model client for an OpenAI-compatible endpoint. */
export function createOpenAiClient(opts: OpenAiClientOptions): ModelClient {
  return new OpenAiModelClient(opts);
}

class OpenAiModelClient implements ModelClient {
  readonly name: string;
  readonly model: string;
  readonly contextWindow?: number;
  #sdk: OpenAI;
  #opts: OpenAiClientOptions;
  /** Set once the endpoint refused a streamed request with tools. */
  #streamRefused = false;

  constructor(opts: OpenAiClientOptions) {
    this.name = opts.name;
    this.model = opts.model;
    this.contextWindow = opts.contextWindow;
    this.#opts = opts;
    this.#sdk = new OpenAI({
      apiKey: opts.apiKey || "not-needed",
      baseURL: opts.baseUrl || undefined,
      maxRetries: 0,
      timeout: opts.requestTimeoutMs,
      ...(opts.maxResponseBytes ? { fetch: cappedFetch(opts.maxResponseBytes) } : {}),
    });
  }

  async *complete(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const policy = this.#opts.retry;
    let retries = 0;
    let triedFallback = false;
    for (;;) {
      const streaming = this.#opts.stream && !this.#streamRefused;
      const state = { emitted: false };
      try {
        if (streaming) {
          yield* this.#streamed(request, signal, state);
        } else {
          const response = await this.#whole(request, signal);
          if (response.text) yield { type: "text", delta: response.text };
          yield { type: "done", response };
        }
        return;
      } catch (e) {
        const err = classify(e, signal);
        if (err.kind === "aborted") throw err;
        if (
          streaming && !triedFallback && err.kind === "bad_request" && request.tools.length > 0
        ) {
          // Some endpoints cannot stream tool calls: ask once without streaming, and keep
          // to that only if it works (a 400 can also mean a request that is simply wrong).
          triedFallback = true;
          try {
            const response = await this.#whole(request, signal);
            this.#streamRefused = true;
            if (response.text) yield { type: "text", delta: response.text };
            yield { type: "done", response };
            return;
          } catch (e2) {
            const err2 = classify(e2, signal);
            if (err2.kind === "aborted" || !err2.retryable || retries >= policy.maxRetries) {
              throw err;
            }
            continue;
          }
        }
        if (!err.retryable || retries >= policy.maxRetries) throw err;
        retries++;
        const delayMs = backoffMs(policy, retries, err, this.#opts.random);
        yield {
          type: "retry",
          attempt: retries,
          delayMs,
          reason: err.message,
          discardedText: state.emitted,
        };
        try {
          await sleep(delayMs, signal, this.#opts.timers);
        } catch {
          throw new LlmError("aborted", "model call cancelled");
        }
      }
    }
  }

  async *#streamed(
    request: ModelRequest,
    signal: AbortSignal,
    state: { emitted: boolean },
  ): AsyncGenerator<ModelEvent> {
    const idle = new AbortController();
    const combined = AbortSignal.any([signal, idle.signal]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => idle.abort(new IdleTimeout()),
        this.#opts.idleTimeoutMs,
      );
    };
    try {
      arm();
      const { data: stream, response } = await this.#sdk.chat.completions.create({
        ...this.#body(request),
        stream: true,
        stream_options: { include_usage: true },
      }, { signal: combined }).withResponse();
      const acc = new StreamAccumulator(this.model);
      for await (const chunk of stream) {
        arm();
        const delta = acc.add(chunk);
        if (delta) {
          state.emitted = true;
          yield { type: "text", delta };
        }
      }
      // The SDK ends iteration quietly when its signal aborts; that is no answer.
      if (combined.aborted) throw combined.reason;
      // Nor is a body with no events at all: a proxy's page, not a model's stream.
      if (acc.chunks === 0) throw notAnswered(this.#opts.baseUrl, response, "an event stream");
      yield { type: "done", response: acc.finish(request) };
    } catch (e) {
      if (idle.signal.aborted && !signal.aborted) {
        throw new LlmError(
          "timeout",
          `model stream stalled: no data for ${this.#opts.idleTimeoutMs / 1000} s`,
          { cause: e },
        );
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  async #whole(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const { data: completion, response } = await this.#sdk.chat.completions.create(
      { ...this.#body(request), stream: false },
      { signal },
    ).withResponse();
    if (!Array.isArray((completion as { choices?: unknown } | null)?.choices)) {
      throw notAnswered(this.#opts.baseUrl, response, "a chat completion");
    }
    const choice = completion.choices[0];
    if (!choice?.message) {
      throw new LlmError("stream", "model endpoint answered a completion without a message");
    }
    const message = choice.message;
    const toolCalls: ToolCall[] = [];
    for (const call of message?.tool_calls ?? []) {
      if (call.type === "function") {
        toolCalls.push({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
      }
    }
    const text = message?.content ?? "";
    return {
      text,
      toolCalls,
      usage: completion.usage ? toUsage(completion.usage) : estimateUsage(request, text, toolCalls),
      finishReason: choice.finish_reason ?? "stop",
      model: completion.model || this.model,
    };
  }

  #body(request: ModelRequest) {
    const tools: ChatCompletionTool[] = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    return {
      model: this.model,
      messages: request.messages.map(toOpenAiMessage),
      ...(tools.length > 0 ? { tools } : {}),
      ...(request.temperature ?? this.#opts.temperature) !== undefined
        ? { temperature: request.temperature ?? this.#opts.temperature }
        : {},
    };
  }
}

/** Assembles streamed chunks into text and whole tool calls. */
class StreamAccumulator {
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
    if (chunk.usage) this.usage = toUsage(chunk.usage);
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

function toOpenAiMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case "system":
    case "user":
      return { role: m.role, content: m.content };
    case "assistant":
      return m.toolCalls && m.toolCalls.length > 0
        ? {
          role: "assistant",
          content: m.content || null,
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
        : { role: "assistant", content: m.content };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  }
}

function toUsage(
  u: { prompt_tokens: number; completion_tokens: number; total_tokens?: number },
): Usage {
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens,
    totalTokens: u.total_tokens ?? u.prompt_tokens + u.completion_tokens,
  };
}

/** About four characters a token, for endpoints that report no usage. */
function estimateUsage(request: ModelRequest, text: string, calls: ToolCall[]): Usage {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  for (const t of request.tools) {
    chars += JSON.stringify(t.parameters).length + t.description.length;
  }
  const out = text.length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const promptTokens = Math.ceil(chars / 4);
  const completionTokens = Math.ceil(out / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

/** Turns whatever the SDK or the stream threw into an {@link LlmError}. */
function classify(e: unknown, signal: AbortSignal): LlmError {
  if (e instanceof LlmError) return e;
  const flood = bytesExceededIn(e);
  if (flood) {
    return new LlmError(
      "too_large",
      `model response passed ${mib(flood.limit)} ([llm] max_response_bytes) and was cut off; ` +
        `ask for a shorter answer or raise the limit`,
      { cause: e },
    );
  }
  if (signal.aborted || e instanceof APIUserAbortError) {
    return new LlmError("aborted", "model call cancelled", { cause: e });
  }
  if (e instanceof APIConnectionTimeoutError) {
    return new LlmError("timeout", "model request timed out", { cause: e });
  }
  if (e instanceof APIConnectionError) {
    return new LlmError("connection", `cannot reach the model endpoint: ${causeText(e)}`, {
      cause: e,
    });
  }
  if (e instanceof APIError && typeof e.status === "number") {
    const kind = kindForStatus(e.status);
    // A proxy's error page says nothing a reader needs in its markup.
    const what = HTML.test(e.message) ? "an HTML page" : e.message;
    return new LlmError(kind, `model endpoint answered ${e.status}: ${what}`, {
      status: e.status,
      retryAfterMs: parseRetryAfter(e.headers),
      cause: e,
    });
  }
  // An error event inside a stream that began well: its code or type says which.
  if (e instanceof APIError) {
    const midStream = streamErrorKind(e);
    if (midStream) {
      return new LlmError(midStream.kind, `model stream failed: ${e.message}`, {
        ...(midStream.status ? { status: midStream.status } : {}),
        cause: e,
      });
    }
  }
  // Anything else broke the response midway: a cut connection, bad SSE, bad JSON.
  const message = errorMessage(e);
  return new LlmError("stream", `model response broke off: ${message}`, { cause: e });
}

/** The kind of an SSE `error` event, from its numeric code or its type; undefined when neither says. */
function streamErrorKind(e: APIError): { kind: LlmErrorKind; status?: number } | undefined {
  const info = e.error as { code?: unknown; type?: unknown } | undefined;
  if (typeof info?.code === "number" && info.code >= 400) {
    return { kind: kindForStatus(info.code), status: info.code };
  }
  const name = `${info?.type ?? ""} ${info?.code ?? ""}`;
  if (/rate_limit/.test(name)) return { kind: "rate_limit" };
  if (/server_error|overloaded/.test(name)) return { kind: "server" };
  return undefined;
}

function mib(n: number): string {
  const m = n / (1024 * 1024);
  return m >= 1 ? `${Number.isInteger(m) ? m : m.toFixed(1)} MiB` : `${n} bytes`;
}

const HTML = /<!doctype html|<html[\s>]/i;

/** The error for a 2xx answer that is not what the request asked for (a proxy's page, say). */
function notAnswered(baseUrl: string, response: Response, expected: string): LlmError {
  const type = response.headers.get("content-type") ?? "";
  const what = /html/i.test(type) ? "an HTML page" : `${type || "a body"} with nothing usable`;
  return new LlmError(
    "stream",
    `model endpoint at ${
      baseUrl || "api.openai.com"
    } answered ${what} (status ${response.status}) where ${expected} was expected; check [llm] base_url`,
  );
}

function causeText(e: Error): string {
  const cause = e.cause;
  if (cause instanceof Error && cause.message) return cause.message;
  return e.message;
}
