/**
 * What went wrong with a call to an OpenAI-compatible endpoint, as an
 * {@link LlmError} whose kind decides whether to retry: whatever the SDK or
 * the stream threw (HTTP statuses, SSE error events, cut connections, an
 * oversized response), and a 2xx answer that is not a completion at all.
 *
 * @module
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import {
  bytesExceededIn,
  kindForStatus,
  LlmError,
  type LlmErrorKind,
  parseRetryAfter,
} from "./errors.ts";
import { errorMessage } from "../util/errors.ts";

/** Turns whatever the SDK or the stream threw into an {@link LlmError}. */
export function classify(e: unknown, signal: AbortSignal): LlmError {
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
export function notAnswered(baseUrl: string, response: Response, expected: string): LlmError {
  const type = response.headers.get("content-type") ?? "";
  const what = /html/i.test(type) ? "an HTML page" : `${type || "a body"} with nothing usable`;
  return new LlmError(
    "stream",
    `model endpoint at ${
      baseUrl || "(none configured)"
    } answered ${what} (status ${response.status}) where ${expected} was expected; check [llm] base_url`,
  );
}

function causeText(e: Error): string {
  const cause = e.cause;
  if (cause instanceof Error && cause.message) return cause.message;
  return e.message;
}
