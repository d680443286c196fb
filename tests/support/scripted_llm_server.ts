/**
 * The scripted OpenAI-compatible HTTP server: one scenario turn per
 * chat-completions request, real SSE streaming, and the failure modes an agent
 * must survive (429, 5xx, stalls, cut connections, delays).
 *
 * @module
 */

import { asChatRequest, clip } from "./scripted_llm_conversation.ts";
import { checkExpect } from "./scripted_llm_expect.ts";
import { FrameStreams, sleep } from "./scripted_llm_streams.ts";
import { renderTemplate } from "./scripted_llm_template.ts";
import {
  type ChatRequest,
  isFault,
  type MessageResponse,
  type RecordedRequest,
  type Respond,
  type Scenario,
  type ToolCallSpec,
} from "./scripted_llm_types.ts";
import {
  ChunkWriter,
  completionBody,
  errorBody,
  type WireContext,
  type WireMessage,
  type WireToolCall,
} from "./scripted_llm_wire.ts";

/** Options of {@linkcode startScriptedLlm}. */
export interface ScriptedLlmOptions {
  scenario: Scenario;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The server only ever binds the loopback interface. */
  hostname?: "127.0.0.1";
  /** Keep every request in `requests` (default true); benches may turn it off. */
  record?: boolean;
}

/** A running scripted server. */
export interface ScriptedLlm extends AsyncDisposable {
  /** Base URL ending in `/v1`: what `OPENAI_BASE_URL` or `baseURL` should be. */
  readonly url: string;
  /** Chat-completions requests received, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Expectation failures and protocol surprises, as readable sentences. */
  readonly failures: readonly string[];
  /** Turns not yet consumed; `Infinity` for a looping scenario. */
  remaining(): number;
  /** Bytes written by `flood` and `trickle` faults so far (what a client was offered). */
  readonly endlessBytes: number;
  /** Resolves once every turn is consumed and its response fully sent (never when looping). */
  settled(): Promise<void>;
  /** Ends open streams and delays, then stops the server. Safe to call twice. */
  close(): Promise<void>;
}

const DEFAULT_CHUNK_SIZE = 8;

/**
 * Starts a scripted server on 127.0.0.1.
 *
 * @example
 * ```ts
 * await using llm = await startScriptedLlm({ scenario: { turns: [{ respond: { text: "hi" } }] } });
 * const client = new OpenAI({ baseURL: llm.url, apiKey: "test", maxRetries: 0 });
 * ```
 */
export async function startScriptedLlm(options: ScriptedLlmOptions): Promise<ScriptedLlm> {
  const server = new ScriptedServer(options);
  await server.listening;
  return server;
}

class ScriptedServer implements ScriptedLlm {
  readonly requests: RecordedRequest[] = [];
  endlessBytes = 0;
  readonly failures: string[] = [];
  readonly listening: Promise<void>;
  readonly #scenario: Scenario;
  readonly #record: boolean;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #closing = new AbortController();
  readonly #streams = new FrameStreams(this.#closing.signal);
  readonly #settled = Promise.withResolvers<void>();
  #served = 0;
  #inFlight = 0;
  #toolCalls = 0;
  #closed: Promise<void> | undefined;

  constructor(options: ScriptedLlmOptions) {
    this.#scenario = options.scenario;
    this.#record = options.record ?? true;
    const ready = Promise.withResolvers<void>();
    this.listening = ready.promise;
    this.#server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      onListen: () => ready.resolve(),
      onError: (error) => {
        if (!FrameStreams.isCut(error)) this.failures.push(`server error: ${error}`);
        return jsonResponse(errorBody(String(error), "server_error"), 500);
      },
    }, (req, info) => this.#handle(req, info));
    this.#checkSettled();
  }

  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/v1`;
  }

  remaining(): number {
    if (this.#scenario.loop) return Infinity;
    return Math.max(0, this.#scenario.turns.length - this.#served);
  }

  settled(): Promise<void> {
    return this.#settled.promise;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing.abort();
      this.#streams.terminateAll();
      await this.#server.shutdown();
    })();
    return this.#closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #checkSettled(): void {
    if (this.remaining() === 0 && this.#inFlight === 0) this.#settled.resolve();
  }

  #handle(req: Request, info: Deno.ServeHandlerInfo): Response | Promise<Response> {
    const path = new URL(req.url).pathname.replace(/\/+$/, "");
    const chat = path === "/v1/chat/completions" || path === "/chat/completions";
    const models = path === "/v1/models" || path === "/models";
    if (chat && req.method === "POST") return this.#chat(req, path, info);
    if (models && req.method === "GET") {
      const data = (this.#scenario.models ?? ["scripted"]).map((id) => ({
        id,
        object: "model",
        created: 0,
        owned_by: "scripted",
      }));
      return jsonResponse({ object: "list", data });
    }
    this.failures.push(`unexpected request ${req.method} ${path}`);
    const message = `Unknown request URL: ${req.method} ${path}`;
    return jsonResponse(errorBody(message, "invalid_request_error"), chat || models ? 405 : 404);
  }

  async #chat(req: Request, path: string, info: Deno.ServeHandlerInfo): Promise<Response> {
    let body: ChatRequest | string;
    try {
      body = asChatRequest(await req.json());
    } catch {
      body = "body is not valid JSON";
    }
    if (typeof body === "string") {
      this.failures.push(`malformed chat request: ${body}`);
      return jsonResponse(errorBody(body, "invalid_request_error"), 400);
    }

    const { turns, loop, name } = this.#scenario;
    const exhausted = this.remaining() === 0 || turns.length === 0;
    const index = exhausted ? null : this.#served % turns.length;
    if (this.#record) {
      const headers = Object.fromEntries(req.headers);
      this.requests.push({ turn: index, path, headers, body });
    }
    if (index === null) {
      const message = `no turns left (${name ?? "scenario"} has ${turns.length})`;
      this.failures.push(
        `unexpected request #${this.#served + 1}: ${message}; last message: ${
          JSON.stringify(clip(JSON.stringify(body.messages.at(-1) ?? null)))
        }`,
      );
      return jsonResponse(errorBody(message, "server_error", "scenario_exhausted"), 500, {
        "x-should-retry": "false",
      });
    }

    this.#served += 1;
    this.#inFlight += 1;
    const done = () => {
      this.#inFlight -= 1;
      this.#checkSettled();
    };
    info.completed.then(done, done);

    const label = `${name ?? "scenario"} turn ${index + 1}${
      loop ? ` (request ${this.#served})` : ""
    }`;
    const fail = (message: string) => this.failures.push(`${label}: ${message}`);
    const turn = turns[index];
    let respond: Respond;
    if (typeof turn === "function") {
      try {
        respond = await turn(body);
      } catch (error) {
        fail(`turn function threw: ${error instanceof Error ? error.stack : error}`);
        return jsonResponse(errorBody(`turn function threw: ${error}`, "server_error"), 500);
      }
    } else {
      checkExpect(turn?.expect ?? {}, body).forEach(fail);
      respond = turn?.respond ?? { text: "" };
    }
    const ctx: WireContext = {
      id: `chatcmpl-scripted-${this.#served}`,
      created: Math.floor(Date.now() / 1000),
      model: !isFault(respond) && respond.model !== undefined ? respond.model : body.model,
      req: body,
    };
    return this.#respond(respond, ctx, fail);
  }

  async #respond(r: Respond, ctx: WireContext, fail: (m: string) => void): Promise<Response> {
    if (!isFault(r)) return this.#message(r, ctx, fail);
    const requestId = { "x-request-id": `req_${ctx.id}` };
    switch (r.fault) {
      case "rate_limit": {
        const headers: Record<string, string> = { ...requestId };
        if (r.retryAfter !== undefined) headers["retry-after"] = String(r.retryAfter);
        if (r.retryAfterMs !== undefined) headers["retry-after-ms"] = String(r.retryAfterMs);
        const message = `Rate limit reached for ${ctx.model}. Please try again later.`;
        return jsonResponse(errorBody(message, "requests", "rate_limit_exceeded"), 429, headers);
      }
      case "server_error": {
        const status = r.status ?? 500;
        const valid = Number.isInteger(status) && status >= 500 && status <= 599;
        if (!valid) fail(`server_error status ${status} is not 5xx; sent 500`);
        const message = "The server had an error while processing your request.";
        return jsonResponse(errorBody(message, "server_error"), valid ? status : 500, requestId);
      }
      case "bad_request": {
        const message = "Invalid request (scripted bad_request fault).";
        return jsonResponse(
          errorBody(message, "invalid_request_error"),
          r.status ?? 400,
          requestId,
        );
      }
      case "stall": {
        const writer = new ChunkWriter(ctx);
        const text = r.afterText ?? "";
        const frames = text ? [writer.role(true), ...writer.text(text, DEFAULT_CHUNK_SIZE)] : [];
        return sseResponse(this.#streams.open(frames, 0, "hang"), requestId);
      }
      case "cut": {
        const call = this.#toolCall(r.toolCall, ctx.req, fail);
        const limit = r.cutAfterChars ?? Math.floor(call.arguments.length / 2);
        const writer = new ChunkWriter(ctx);
        const frames = [writer.role(false), ...writer.toolCall(0, call, DEFAULT_CHUNK_SIZE, limit)];
        return sseResponse(this.#streams.open(frames, 0, "cut"), requestId);
      }
      case "flood":
      case "trickle": {
        const writer = new ChunkWriter(ctx);
        const flood = r.fault === "flood";
        const chunk = r.chunk ?? (flood ? "a".repeat(4096) : "a");
        const delta = writer.text(chunk, chunk.length)[0] ?? "";
        const body = this.#streams.endless(
          [writer.role(false)],
          () => delta,
          r.delayMs ?? (flood ? 0 : 500),
          (n) => this.endlessBytes += n,
        );
        return sseResponse(body, requestId);
      }
      case "truncate": {
        const writer = new ChunkWriter(ctx);
        const frames = [writer.role(true), ...writer.text(r.afterText, DEFAULT_CHUNK_SIZE)];
        if (r.done) frames.push("data: [DONE]\n\n");
        return sseResponse(frames.join(""), requestId);
      }
      case "reset": {
        const writer = new ChunkWriter(ctx);
        const frames = [writer.role(true), ...writer.text(r.afterText, DEFAULT_CHUNK_SIZE)];
        if (r.status === undefined) {
          return sseResponse(this.#streams.open(frames, 0, "cut"), requestId);
        }
        const type = r.status === 429 ? "rate_limit_exceeded" : "server_error";
        const error = { message: `scripted ${r.status} mid-stream`, type, code: r.status };
        frames.push(`data: ${JSON.stringify({ error })}\n\n`);
        return sseResponse(frames.join(""), requestId);
      }
      case "delay": {
        if (!await sleep(r.ms, this.#closing.signal)) {
          return jsonResponse(errorBody("The server is shutting down.", "server_error"), 503);
        }
        return this.#respond(r.then, ctx, fail);
      }
    }
  }

  #message(r: MessageResponse, ctx: WireContext, fail: (m: string) => void): Response {
    const render = (text: string) => renderOrFail(text, ctx.req, fail);
    const toolCalls = (r.toolCalls ?? []).map((call) => this.#toolCall(call, ctx.req, fail));
    const message: WireMessage = {
      toolCalls,
      finishReason: r.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      ...(r.text === undefined ? {} : { text: render(r.text) }),
      ...(r.usage ? { usage: r.usage } : {}),
    };
    const headers = { "x-request-id": `req_${ctx.id}` };
    if (ctx.req.stream !== true) return jsonResponse(completionBody(message, ctx), 200, headers);
    const frames = new ChunkWriter(ctx).message(message, r.chunkSize ?? DEFAULT_CHUNK_SIZE);
    if (!r.chunkDelayMs) return sseResponse(frames.join(""), headers);
    return sseResponse(this.#streams.open(frames, r.chunkDelayMs, "close"), headers);
  }

  #toolCall(call: ToolCallSpec, req: ChatRequest, fail: (m: string) => void): WireToolCall {
    this.#toolCalls += 1;
    const render = (text: string) => renderOrFail(text, req, fail);
    const args = typeof call.arguments === "string"
      ? render(call.arguments)
      : JSON.stringify(mapStrings(call.arguments, render));
    return { id: call.id ?? `call_${this.#toolCalls}`, name: call.name, arguments: args };
  }
}

function renderOrFail(text: string, req: ChatRequest, fail: (m: string) => void): string {
  const rendered = renderTemplate(text, req);
  for (const expr of rendered.unresolved) fail(`unresolved template {{${expr}}}`);
  return rendered.text;
}

/** Applies `f` to every string inside a JSON value. */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, f));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  }
  return value;
}

function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function sseResponse(body: BodyInit, headers: Record<string, string>): Response {
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers },
  });
}
