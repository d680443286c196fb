/**
 * Response bodies that write SSE frames over time and may end by closing, by
 * dropping the connection, or not at all, and which the server can end on close.
 *
 * @module
 */

/** How a frame stream ends once its frames are written. */
export type StreamEnd = "close" | "cut" | "hang";

/**
 * The error a body is failed with to drop the connection. Deno then aborts the
 * HTTP/1.1 response without its final chunk, so the client sees a broken body.
 */
const CUT = new Error("scripted connection cut");

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The open frame streams of one server. */
export class FrameStreams {
  readonly #open = new Set<() => void>();
  readonly #closing: AbortSignal;

  /** Streams opened after `closing` aborts are cut at once. */
  constructor(closing: AbortSignal) {
    this.#closing = closing;
  }

  /** Whether a server error is just a stream this class cut on purpose. */
  static isCut(error: unknown): boolean {
    return error === CUT;
  }

  /**
   * A body writing one frame per pull, `delayMs` apart. A frame is only written
   * once the previous one was taken, so a `cut` drops the connection after the
   * client could read every frame.
   */
  open(frames: readonly string[], delayMs: number, end: StreamEnd): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    const stop = new AbortController();
    let next = 0;
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const finish = () => {
      stop.abort();
      this.#open.delete(terminate);
    };
    const terminate = () => {
      finish();
      controller?.error(CUT);
    };

    return new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
        this.#open.add(terminate);
        if (this.#closing.aborted) terminate();
      },
      pull: async (c) => {
        const frame = frames[next];
        if (frame !== undefined) {
          if (delayMs > 0 && next > 0 && !await sleep(delayMs, stop.signal)) return;
          next += 1;
          c.enqueue(encoder.encode(frame));
        } else if (end === "close") {
          finish();
          c.close();
        } else if (end === "cut") {
          finish();
          c.error(CUT);
        } else {
          await new Promise((resolve) => {
            if (stop.signal.aborted) resolve(undefined);
            stop.signal.addEventListener("abort", resolve, { once: true });
          });
        }
      },
      cancel: finish,
    }, { highWaterMark: 0 });
  }

  /**
   * A body writing `first`, then `next()` without end, `delayMs` apart, until
   * the client cancels it or the server closes. `sent` counts every byte
   * handed to the connection.
   */
  endless(
    first: readonly string[],
    next: () => string,
    delayMs: number,
    sent: (bytes: number) => void,
  ): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    const stop = new AbortController();
    let index = 0;
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const finish = () => {
      stop.abort();
      this.#open.delete(terminate);
    };
    const terminate = () => {
      finish();
      controller?.error(CUT);
    };
    return new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
        this.#open.add(terminate);
        if (this.#closing.aborted) terminate();
      },
      pull: async (c) => {
        if (delayMs > 0 && index > first.length && !await sleep(delayMs, stop.signal)) return;
        const frame = encoder.encode(first[index] ?? next());
        index += 1;
        sent(frame.byteLength);
        c.enqueue(frame);
      },
      cancel: finish,
    }, { highWaterMark: 0 });
  }

  /** Cuts every open stream (the server is closing). */
  terminateAll(): void {
    for (const terminate of [...this.#open]) terminate();
  }
}
