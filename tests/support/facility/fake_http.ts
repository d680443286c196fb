/**
 * A tiny loopback HTTP server for the fake facility services: 127.0.0.1
 * only, latency and HTTP 500 injection, request log, and a lifetime after
 * which it stops by itself so a failed test leaves nothing listening.
 *
 * @module
 */

/** Fault switches shared by every fake service. */
export interface Faults {
  /** Delay before each answer, in ms. */
  latencyMs: number;
  /** Answer every request with HTTP 500 and a Java-like error page. */
  fail500: boolean;
  /** Answers in place of the service when it returns a response (a misbehaving peer). */
  respond?: (url: URL) => Response | undefined;
}

export class FakeHttp implements AsyncDisposable {
  readonly faults: Faults = { latencyMs: 0, fail500: false };
  /** Path and query of every request, in order. */
  readonly requests: string[] = [];
  readonly #server: Deno.HttpServer;
  readonly #timer: ReturnType<typeof setTimeout>;
  /** Aborted on close: ends the latency of answers still held back. */
  readonly #closing = new AbortController();

  constructor(
    handler: (url: URL, req: Request) => Response | Promise<Response>,
    lifetimeMs = 120_000,
  ) {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const url = new URL(req.url);
        this.requests.push(`${url.pathname}${url.search}`);
        if (this.faults.latencyMs > 0 && !await this.#lag(this.faults.latencyMs)) {
          return new Response("the fake service is closing", { status: 503 });
        }
        if (this.faults.fail500) {
          return new Response("<html><body>HTTP Status 500 – Internal Server Error</body></html>", {
            status: 500,
            headers: { "content-type": "text/html" },
          });
        }
        return this.faults.respond?.(url) ?? await handler(url, req);
      },
    );
    this.#timer = setTimeout(() => this.close(), lifetimeMs);
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.#server.addr as Deno.NetAddr).port}`;
  }

  /** Waits `ms`; false when the server closes first. */
  #lag(ms: number): Promise<boolean> {
    const closing = this.#closing.signal;
    return new Promise((resolve) => {
      if (closing.aborted) return resolve(false);
      const onClose = () => {
        clearTimeout(id);
        resolve(false);
      };
      const id = setTimeout(() => {
        closing.removeEventListener("abort", onClose);
        resolve(true);
      }, ms);
      closing.addEventListener("abort", onClose, { once: true });
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#closing.abort();
    await this.#server.shutdown().catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A JSON body from text we write ourselves (the archiver needs bare NaN tokens). */
export function jsonText(text: string, status = 200): Response {
  return new Response(text, { status, headers: { "content-type": "application/json" } });
}

/** Compiles a case-insensitive glob (`*`, `?`). */
export function globRe(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "i");
}

/**
 * A body that never ends: `prefix`, then `chunk` again and again until the
 * client goes away. The default is a JSON array of channels without end; a
 * prefix of `["` makes one string without end.
 */
export class EndlessBody {
  /** Bytes handed to the server so far. */
  sent = 0;
  /** Whether the client cancelled the body (stopped reading). */
  cancelled = false;

  constructor(
    readonly chunk: string = '{"name":"X:Y:Z","properties":[]},'.repeat(2000),
    readonly prefix = "[",
  ) {}

  /** A fresh response streaming this body; `headers` are added (e.g. a lying content-length). */
  response(headers: Record<string, string> = {}): Response {
    const bytes = new TextEncoder().encode(this.chunk);
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new TextEncoder().encode(this.prefix)),
      pull: (c) => {
        this.sent += bytes.byteLength;
        c.enqueue(bytes);
      },
      cancel: () => {
        this.cancelled = true;
      },
    }, { highWaterMark: 1 });
    return new Response(stream, {
      headers: { "content-type": "application/json", ...headers },
    });
  }
}
