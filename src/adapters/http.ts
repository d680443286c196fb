/**
 * HTTP for the facility adapters: one deadline per call composed with the
 * caller's signal, Basic credentials read from environment variables named
 * in the config, and one-line errors that say which service failed and how.
 *
 * @module
 */

/** A facility service answered with an HTTP error status. */
export class HttpStatusError extends Error {
  override name = "HttpStatusError";
  constructor(message: string, readonly status: number, readonly body: string) {
    super(message);
  }
}

/** How to reach one HTTP service. */
export interface HttpService {
  /** Shown in messages: "archiver", "ChannelFinder", "TANGO REST"… */
  label: string;
  /** Base URL without a trailing slash. */
  base: string;
  timeoutMs: number;
  /** Value of the Authorization header, when credentials are configured. */
  authorization?: string;
  /**
   * Largest response body read, in bytes (default {@link DEFAULT_MAX_BYTES}).
   * A longer body aborts the request with {@link ResponseTooLargeError}.
   */
  maxBytes?: number;
  /** The config key that sets `maxBytes`, named in the error ("[epics] archiver_max_bytes"). */
  maxBytesKey?: string;
}

/** A body cap for services whose config sets none: 64 MiB. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** A facility service sent (or announced) a body longer than its configured cap. */
export class ResponseTooLargeError extends Error {
  override name = "ResponseTooLargeError";
  constructor(message: string, readonly limit: number, readonly received: number) {
    super(message);
  }
}

/** "64 MiB", "512 KiB", "300 bytes": a byte count as a person reads it. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

/**
 * Reads a response body as text, at most `svc.maxBytes` bytes: a declared
 * Content-Length above the cap is refused before reading, and a body that
 * grows past it is cancelled at once (the connection is dropped), so an
 * endless or huge answer costs no more memory than the cap.
 */
export async function readCapped(res: Response, svc: HttpService, url: string): Promise<string> {
  const limit = svc.maxBytes ?? DEFAULT_MAX_BYTES;
  const tooLarge = (received: number) =>
    new ResponseTooLargeError(
      `${svc.label} at ${url.split("?")[0]}: the response exceeded ${formatBytes(limit)}${
        svc.maxBytesKey ? ` (${svc.maxBytesKey})` : ""
      }; ask for less (narrow the time range or the pattern) or raise the limit`,
      limit,
      received,
    );
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(declared);
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(received);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const all = new Uint8Array(received);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * Builds a Basic Authorization header from two environment variables; the
 * config names the variables, never the secrets. Undefined when unset.
 */
export function basicAuth(
  env: (name: string) => string | undefined,
  userVar: string,
  passwordVar: string,
): string | undefined {
  const user = userVar ? env(userVar) : undefined;
  if (!user) return undefined;
  const password = (passwordVar ? env(passwordVar) : undefined) ?? "";
  return `Basic ${btoa(`${user}:${password}`)}`;
}

/** Reads an environment variable, treating a missing --allow-env grant as unset. */
export function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** Strips trailing slashes so paths can be appended with one "/". */
export function trimBase(url: string): string {
  return url.replace(/\/+$/, "");
}

/**
 * Sends one request and returns the response text, read through
 * {@link readCapped}. Non-2xx statuses throw {@link HttpStatusError}; a body
 * past the service's cap throws {@link ResponseTooLargeError}; a timeout or
 * refused connection throws an Error naming the service and the URL.
 */
export async function httpText(
  svc: HttpService,
  path: string,
  init: { method?: string; body?: string; accept?: string; signal?: AbortSignal } = {},
): Promise<{ status: number; text: string }> {
  const url = `${svc.base}${path}`;
  const timeout = AbortSignal.timeout(svc.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: init.accept ?? "application/json" };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (svc.authorization) headers.authorization = svc.authorization;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { method: init.method ?? "GET", headers, body: init.body, signal });
    text = await readCapped(res, svc, url);
  } catch (e) {
    if (e instanceof ResponseTooLargeError) throw e;
    if (init.signal?.aborted) throw init.signal.reason;
    if (timeout.aborted) {
      throw new Error(
        `${svc.label} at ${svc.base} did not answer within ${svc.timeoutMs} ms; check the service or raise its timeout`,
      );
    }
    const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new Error(
      `${svc.label} at ${svc.base} is unreachable (${why}); check the URL in the config`,
    );
  }
  if (!res.ok) {
    throw new HttpStatusError(
      `${svc.label} answered HTTP ${res.status} for ${path.split("?")[0]}${
        text ? `: ${text.slice(0, 200).replace(/\s+/g, " ")}` : ""
      }`,
      res.status,
      text,
    );
  }
  return { status: res.status, text };
}

/**
 * Parses JSON that may hold the bare tokens `NaN`, `Infinity` and
 * `-Infinity` (the archiver's Java serializer writes them): they become null.
 */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return JSON.parse(
      text.replace(/(:\s*|\[\s*|,\s*)(-?Infinity|NaN)(?=\s*[,\]}])/g, "$1null"),
    );
  }
}

/** Encodes query parameters; arrays repeat the key. Undefined values are left out. */
export function query(params: Record<string, string | number | string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) { for (const x of v) q.append(k, x); }
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}
