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
  | "stream";

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
