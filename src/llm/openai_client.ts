/**
 * A {@link ModelClient} for any OpenAI-compatible endpoint (OpenAI, vLLM,
 * Ollama, LiteLLM). It streams chat completions, falls back to non-streaming
 * when an endpoint refuses to stream tools, and retries with backoff on our
 * own budget (the SDK's retries are off). This module and the `openai_*`
 * ones it uses (request and response format, stream assembly, error
 * classification) are the only ones that import `openai`, and only this one
 * is imported from outside them, lazily, when a model is first needed.
 *
 * @module
 */
import OpenAI from "openai";
import { cappedFetch, LlmError } from "./errors.ts";
import { classify, notAnswered } from "./openai_errors.ts";
import { fromCompletion, requestBody } from "./openai_request.ts";
import { StreamAccumulator } from "./openai_stream.ts";
import { backoffMs, type RetryPolicy, sleep } from "./retry.ts";
import type { Timers } from "../util/misc.ts";
import type { ModelClient, ModelEvent, ModelRequest, ModelResponse } from "./types.ts";

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
    return fromCompletion(completion, request, this.model);
  }

  #body(request: ModelRequest) {
    return requestBody(this.model, request, this.#opts.temperature);
  }
}
