/**
 * Contracts of the scripted OpenAI-compatible server: what a scenario may say and
 * what the server records. Kept free of the `openai` package so the CLI runs with
 * nothing but `--allow-net --allow-read`.
 *
 * @module
 */

/** One part of a multi-part message content. Only `text` parts are read. */
export interface ContentPart {
  type: string;
  text?: string;
}

/** A chat message as received on the wire (checked to have a string `role`). */
export interface ChatMessage {
  role: string;
  content?: string | ContentPart[] | null;
  tool_call_id?: string;
  tool_calls?: {
    id: string;
    type: string;
    function: { name: string; arguments: string };
  }[];
  name?: string;
}

/** A tool offered to the model, as received on the wire. */
export interface ChatTool {
  type: string;
  function?: { name: string; description?: string; parameters?: unknown };
}

/** The parsed body of a `POST /chat/completions` request. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  [key: string]: unknown;
}

/** A request the server received, in arrival order. */
export interface RecordedRequest {
  /** Index into `scenario.turns` of the turn that answered it; `null` when none was left. */
  turn: number | null;
  /** Request path, e.g. `/v1/chat/completions`. */
  path: string;
  /** All request headers, lower-cased names (`authorization`, `x-stainless-retry-count`, …). */
  headers: Record<string, string>;
  body: ChatRequest;
}

/** Token counts to report; computed from sizes (about 4 characters a token) when omitted. */
export interface UsageSpec {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A tool call the scripted model makes. */
export interface ToolCallSpec {
  /** Defaults to `call_<n>`, `n` counting tool calls across the server's life from 1. */
  id?: string;
  name: string;
  /**
   * An object is JSON-stringified (templates rendered in its string leaves); a string
   * is sent verbatim after template rendering, so it may be invalid JSON on purpose.
   */
  arguments: string | Record<string, unknown>;
}

/**
 * An assistant message. Streamed as SSE chunks when the request asks for
 * `stream: true`, otherwise returned as one `chat.completion` object.
 * `text` and string `arguments` may contain `{{last_tool_result}}`,
 * `{{last_tool_result.a.b[0]}}` and `{{last_user}}` templates.
 */
export interface MessageResponse {
  text?: string;
  toolCalls?: ToolCallSpec[];
  usage?: UsageSpec;
  /** Defaults to `"tool_calls"` when there are tool calls, else `"stop"`. */
  finishReason?: string;
  /** Characters of text or arguments per chunk; default 8. */
  chunkSize?: number;
  /** Pause between chunks; default 0 (the whole stream is written at once). */
  chunkDelayMs?: number;
  /** The model id the response reports; default the one the request named. */
  model?: string;
}

/** HTTP 429 with an OpenAI-shaped error body. */
export interface RateLimitFault {
  fault: "rate_limit";
  /** Seconds, sent as the `Retry-After` header. */
  retryAfter?: number;
  /** Milliseconds, sent as the `retry-after-ms` header. */
  retryAfterMs?: number;
}

/** HTTP 500 (or the given 5xx) with an OpenAI-shaped error body. */
export interface ServerErrorFault {
  fault: "server_error";
  status?: number;
}

/** HTTP 400 or 422 with an `invalid_request_error` body. */
export interface BadRequestFault {
  fault: "bad_request";
  status?: 400 | 422;
}

/**
 * SSE headers, optionally some text chunks, then silence until the client goes
 * away or the server closes.
 */
export interface StallFault {
  fault: "stall";
  afterText?: string;
}

/** Starts streaming a tool call and drops the connection in the middle of its arguments. */
export interface CutFault {
  fault: "cut";
  toolCall: ToolCallSpec;
  /** Argument characters sent before the cut; default half of them. */
  cutAfterChars?: number;
}

/**
 * Streams some text, then closes the body cleanly with no `finish_reason`
 * chunk (and, unless `done` is true, no `[DONE]` either): a proxy that cut
 * the answer short without dropping the connection.
 */
export interface TruncateFault {
  fault: "truncate";
  afterText: string;
  /** Send the `[DONE]` end marker after the text (still no finish reason). */
  done?: boolean;
}

/**
 * Streams some text, then fails mid-answer: with `status`, an SSE `error`
 * event as an endpoint sends when it is overloaded (429) or fails (5xx)
 * after the stream began; without, the connection is dropped (a reset).
 */
export interface ResetFault {
  fault: "reset";
  afterText: string;
  status?: number;
}

/** Waits `ms` before any byte is sent, then responds with `then`. */
export interface DelayFault {
  fault: "delay";
  ms: number;
  then: Respond;
}

/**
 * Streams text deltas of `chunk` without end, `delayMs` apart (default 0: as
 * fast as the client reads), until the client goes away or the server closes.
 * `flood` is the endpoint that never stops talking; a long `delayMs` with a
 * short chunk is the one that trickles a token every few seconds for ever.
 */
export interface EndlessFault {
  fault: "flood" | "trickle";
  /** Text of each delta; default 4 KiB of "a" for a flood, "a" for a trickle. */
  chunk?: string;
  /** Pause between deltas; default 0 for a flood, 500 ms for a trickle. */
  delayMs?: number;
}

/** Any failure mode the server can play. */
export type FaultResponse =
  | RateLimitFault
  | ServerErrorFault
  | BadRequestFault
  | StallFault
  | CutFault
  | TruncateFault
  | ResetFault
  | DelayFault
  | EndlessFault;

/** What one turn answers. */
export type Respond = MessageResponse | FaultResponse;

/** Roles `Expect.lastRole` can ask for. */
export type Role = "user" | "tool" | "assistant" | "system";

/**
 * Assertions on the request a turn answers. Each mismatch is recorded in
 * `ScriptedLlm.failures`; the turn still responds.
 */
export interface Expect {
  /** Exact set of function names in `tools`. */
  toolsOffered?: string[];
  toolsInclude?: string[];
  toolsExclude?: string[];
  /** Role of the last message. */
  lastRole?: Role;
  /** The last user message contains this text. */
  userIncludes?: string;
  /** Each string appears in some tool message sent since the last assistant message. */
  toolResultIncludes?: string[];
  /** The tool message answering `toolCallId` (default: the most recent one) contains `includes`. */
  toolResultFor?: { toolCallId?: string; includes: string };
  /** Some system or developer message contains this text. */
  systemIncludes?: string;
  model?: string;
  /** Whether the request asked for streaming. */
  stream?: boolean;
}

/** A scripted turn: optional checks on the request, then the response. */
export interface ScriptedTurn {
  expect?: Expect;
  respond: Respond;
}

/** A turn is data, or (in TypeScript tests) a function of the request. */
export type Turn = ScriptedTurn | ((req: ChatRequest) => Respond | Promise<Respond>);

/**
 * A conversation script: one turn consumed per chat-completions request, in order.
 *
 * @example
 * ```ts
 * const scenario: Scenario = {
 *   name: "reads a PV",
 *   turns: [
 *     { respond: { toolCalls: [{ name: "read_pv", arguments: { pv: "SR:DCCT" } }] } },
 *     { expect: { lastRole: "tool" }, respond: { text: "Current is {{last_tool_result.value}} mA" } },
 *   ],
 * };
 * ```
 */
export interface Scenario {
  name?: string;
  turns: Turn[];
  /** Cycle through the turns forever (for benchmarks); `remaining()` is then `Infinity`. */
  loop?: boolean;
  /** Model ids listed by `GET /v1/models`; default `["scripted"]`. */
  models?: string[];
}

/** Tells a fault from a message. */
export function isFault(respond: Respond): respond is FaultResponse {
  return "fault" in respond;
}
