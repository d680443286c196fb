/**
 * Typed model failures. Retry decisions read `kind`, `status` and
 * `retryAfterMs`, never the message text.
 *
 * @module
 */

export type LlmErrorKind =
  | "rate_limit"
  | "server"
  | "connection"
  | "timeout"
  | "aborted"
  | "bad_request"
  | "auth"
  | "not_found"
  | "stream"
  /** One response was longer than `[llm] max_response_bytes`; asking again would flood again. */
  | "too_large";

const RETRYABLE: ReadonlySet<LlmErrorKind> = new Set([
  "rate_limit",
  "server",
  "connection",
  "timeout",
  "stream",
]);

/** A failed model call, classified. */
export class LlmError extends Error {
  override name = "LlmError";
  readonly kind: LlmErrorKind;
  readonly status?: number;
  /** The server's Retry-After, in milliseconds, when it sent one. */
  readonly retryAfterMs?: number;

  constructor(
    kind: LlmErrorKind,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }

  /** Whether trying the same call again may succeed. */
  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** Classifies an HTTP status. */
export function kindForStatus(status: number): LlmErrorKind {
  if (status === 429) return "rate_limit";
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 408) return "timeout";
  if (status === 409 || status >= 500) return "server";
  return "bad_request";
}

/**
 * Reads Retry-After (seconds or an HTTP date) and retry-after-ms headers.
 * Returns milliseconds, or undefined when absent or unreadable.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) {
    return Math.max(0, Number(ms));
  }
  const ra = headers.get("retry-after");
  if (ra === null || ra.trim() === "") return undefined;
  const seconds = Number(ra);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Thrown inside a response body that passed its byte cap; becomes a `too_large` {@link LlmError}. */
export class ResponseBytesExceeded extends Error {
  override name = "ResponseBytesExceeded";
  constructor(readonly limit: number) {
    super(`the model's response passed ${limit} bytes`);
  }
}

/** The {@link ResponseBytesExceeded} in `e` or its chain of causes, if any. */
export function bytesExceededIn(e: unknown): ResponseBytesExceeded | undefined {
  for (let x = e, depth = 0; x !== undefined && x !== null && depth < 8; depth++) {
    if (x instanceof ResponseBytesExceeded) return x;
    x = x instanceof Error ? x.cause : undefined;
  }
  return undefined;
}

/**
 * A `fetch` whose response bodies fail with {@link ResponseBytesExceeded}
 * once they pass `limit` bytes; the transfer is cancelled at that point, so
 * a flooding endpoint costs no more memory than the cap.
 */
export function cappedFetch(limit: number, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    if (!res.body) return res;
    let received = 0;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.byteLength;
          if (received > limit) controller.error(new ResponseBytesExceeded(limit));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
