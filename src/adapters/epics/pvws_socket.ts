/**
 * Opening a pvws socket, apart from what the client does with it: one
 * attempt bounded by the connect timeout and cancellable when the adapter
 * closes, and a caller's wait for a shared opening that ends at its own
 * abort or deadline without ending the opening.
 *
 * @module
 */
import type { Timers } from "../../util/misc.ts";

/**
 * Opens a socket to `url`, failing after `connectTimeoutMs` or when the
 * cancel function handed to `setCancel` is called (it is handed `undefined`
 * again once the attempt is over). Errors name the gateway and what to check.
 */
export function openSocket(
  url: string,
  connectTimeoutMs: number,
  timers: Timers,
  setCancel: (cancel: (() => void) | undefined) => void,
): Promise<WebSocket> {
  return new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url);
    const fail = (why: string, hint = "; check [epics] pvws_url and the gateway") => {
      timers.clearTimeout(timer);
      setCancel(undefined);
      ws.onopen = ws.onerror = ws.onclose = null;
      try {
        ws.close();
      } catch { /* never opened */ }
      reject(new Error(`pvws gateway at ${url} ${why}${hint}`));
    };
    const timer = timers.setTimeout(
      () => fail(`did not accept a connection within ${connectTimeoutMs} ms`),
      connectTimeoutMs,
    );
    ws.onopen = () => {
      timers.clearTimeout(timer);
      setCancel(undefined);
      resolve(ws);
    };
    setCancel(() => fail("was not connected: the EPICS adapter was closed", ""));
    ws.onerror = (e) => fail(`is unreachable (${(e as ErrorEvent).message ?? "error"})`);
    ws.onclose = () => fail("closed the connection");
  });
}

/**
 * `opening`, or a rejection as soon as the signal is aborted (with its
 * reason) or `late.ms` have passed (with `late.error()`).
 */
export function waitForOpening<T>(
  timers: Timers,
  opening: Promise<T>,
  signal?: AbortSignal,
  late?: { ms: number; error: () => Error },
): Promise<T> {
  if (!signal && !late) return opening;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = late ? timers.setTimeout(() => reject(late.error()), late.ms) : undefined;
    opening.then(resolve, reject).finally(() => {
      if (timer !== undefined) timers.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  });
}

/** An abort reason or thrown value as an Error. */
export function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason ?? "aborted"));
}

/**
 * Exponential backoff between openings: after a failed one the next waits
 * twice as long (up to `maxMs`), and an opening asked for inside that
 * window fails at once with the last error, since waiting could outlast the
 * caller's timeout. A success starts again from `minMs`.
 */
export class Backoff {
  #delayMs: number;
  #retryAt = 0;
  #lastError?: Error;

  constructor(
    readonly minMs: number,
    readonly maxMs: number,
    readonly timers: Timers,
  ) {
    this.#delayMs = minMs;
  }

  /** Throws the last error when the next attempt is not due yet. */
  check(): void {
    const wait = this.#retryAt - this.timers.now();
    if (wait > 0 && this.#lastError) {
      throw new Error(`${this.#lastError.message} (next attempt in ${Math.ceil(wait)} ms)`);
    }
  }

  succeeded(): void {
    this.#delayMs = this.minMs;
    this.#retryAt = 0;
    this.#lastError = undefined;
  }

  failed(e: unknown): void {
    this.#lastError = asError(e);
    this.#retryAt = this.timers.now() + this.#delayMs;
    this.#delayMs = Math.min(this.maxMs, this.#delayMs * 2);
  }

  /** How long a background reconnect waits before its attempt. */
  nextDelayMs(): number {
    return Math.max(this.#delayMs, this.#retryAt - this.timers.now());
  }
}

/**
 * A ping every so often on a socket that sent nothing meanwhile, so proxies
 * keep an idle socket open. It runs on timers that (when real) do not keep
 * the program running, and ends when the socket is no longer the current one.
 */
export class Keepalive {
  #timer?: ReturnType<typeof setTimeout>;

  constructor(readonly everyMs: number, readonly timers: Timers) {}

  /**
   * Every `everyMs` while `current()` is `ws`: `ping()` if the socket is
   * open and nothing was sent since `lastSent()` that long ago.
   */
  start(
    ws: WebSocket,
    current: () => WebSocket | undefined,
    lastSent: () => number,
    ping: () => void,
  ): void {
    const { everyMs: every, timers } = this;
    this.stop();
    const tick = () => {
      if (current() !== ws) return;
      if (ws.readyState === WebSocket.OPEN && timers.now() - lastSent() >= every) ping();
      this.#timer = timers.setTimeout(tick, every);
    };
    this.#timer = timers.setTimeout(tick, every);
  }

  stop(): void {
    if (this.#timer !== undefined) this.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
