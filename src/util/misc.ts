/**
 * Small helpers used across layers.
 *
 * @module
 */

/** Six significant digits: beyond any instrument's resolution, and short to read. */
export function round6(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}

/** The value at `path` inside nested objects and arrays, or undefined. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/**
 * The longest delay one timer can hold: 2^31 − 1 ms (about 24.8 days).
 * `setTimeout` and `AbortSignal.timeout` fire at once above it, so longer
 * waits are made of chunks no longer than this.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

type TimerId = ReturnType<typeof setTimeout>;

/** The clock and timers `sleep` and `timeoutSignal` use; tests pass fake ones. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): TimerId;
  clearTimeout(id: TimerId): void;
  /** Milliseconds on a monotonic clock. */
  now(): number;
}

/** The real clock and timers. */
export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id),
  now: () => performance.now(),
};

/** Timers that do not keep the program alive, as `AbortSignal.timeout`'s do not. */
const unrefTimers: Timers = {
  ...realTimers,
  setTimeout: (fn, ms) => {
    const id = setTimeout(fn, ms);
    Deno.unrefTimer(Number(id));
    return id;
  },
};

/**
 * Calls `fn` once `ms` have passed on the monotonic clock: timers of at most
 * {@link MAX_TIMER_MS} each, re-armed until the deadline is really reached
 * (a timer that fires early never ends the wait). Returns a cancel function.
 */
function after(ms: number, fn: () => void, timers: Timers): () => void {
  const deadline = timers.now() + ms;
  let id: TimerId | undefined;
  const arm = () => {
    const left = deadline - timers.now();
    if (left <= 0) return fn();
    id = timers.setTimeout(arm, Math.min(Math.ceil(left), MAX_TIMER_MS));
  };
  arm();
  return () => {
    if (id !== undefined) timers.clearTimeout(id);
  };
}

/**
 * Resolves after `ms`, or rejects with the signal's reason when it aborts
 * first. Any finite length waits in full (see {@link MAX_TIMER_MS}); a
 * length that is not a finite number is a programming error and throws.
 */
export function sleep(ms: number, signal?: AbortSignal, timers = realTimers): Promise<void> {
  if (Number.isNaN(ms) || ms === Infinity) {
    return Promise.reject(new RangeError(`cannot sleep for ${ms} ms`));
  }
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    if (ms <= 0) return resolve();
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = after(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, timers);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Like `AbortSignal.timeout(ms)`, for any finite length: it aborts with a
 * "TimeoutError" DOMException once `ms` have really passed. Like it, its
 * timer does not keep the program alive.
 */
export function timeoutSignal(ms: number, timers = unrefTimers): AbortSignal {
  if (!Number.isFinite(ms)) throw new RangeError(`cannot time out after ${ms} ms`);
  const controller = new AbortController();
  after(
    Math.max(0, ms),
    () => controller.abort(new DOMException("The operation timed out.", "TimeoutError")),
    timers,
  );
  return controller.signal;
}
