/**
 * Exponential backoff with full jitter, honouring the server's Retry-After.
 *
 * @module
 */
import type { LlmError } from "./errors.ts";

export interface RetryPolicy {
  /** Retries after the first attempt; the budget is per model call. */
  maxRetries: number;
  baseMs: number;
  maxMs: number;
}

/**
 * How long to wait before retry number `attempt` (1-based): the server's
 * Retry-After when given (capped at `maxMs`), else a random delay in
 * [base·2^(attempt−1)/2, base·2^(attempt−1)], capped.
 */
export function backoffMs(
  policy: RetryPolicy,
  attempt: number,
  error: LlmError,
  random: () => number = Math.random,
): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, policy.maxMs);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * ceiling / 2);
}

export { sleep } from "../util/misc.ts";
