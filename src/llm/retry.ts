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
 * Retry-After when given (capped at `maxMs`), else "full jitter" as AWS
 * describes it: a uniformly random delay in [0, min(maxMs, base·2^(attempt−1))].
 * (Spreading retries over the whole range is what keeps many clients that
 * failed together from retrying together.)
 */
export function backoffMs(
  policy: RetryPolicy,
  attempt: number,
  error: LlmError,
  random: () => number = Math.random,
): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, policy.maxMs);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  return Math.round(random() * ceiling);
}

export { sleep } from "../util/misc.ts";
