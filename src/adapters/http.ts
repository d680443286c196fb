/**
 * HTTP for the facility adapters: one deadline per call composed with the
 * caller's signal, Basic credentials read from environment variables named
 * in the config, and one-line errors that say which service failed and how.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";
import { timeoutSignal } from "../util/misc.ts";
import { looksLikeHtml, ReplyShapeError } from "./reply.ts";
import {
  type HttpService,
  readCapped,
  readErrorText,
  ResponseTooLargeError,
} from "./capped_body.ts";

export type { HttpService };

export {
  DEFAULT_MAX_BYTES,
  formatBytes,
  readCapped,
  ResponseTooLargeError,
} from "./capped_body.ts";

/** A facility service answered with an HTTP error status. */
export class HttpStatusError extends Error {
  override name = "HttpStatusError";
  constructor(message: string, readonly status: number, readonly body: string) {
    super(message);
  }
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
  init: HttpInit = {},
): Promise<{ status: number; text: string }> {
  const { status, body } = await httpRead(svc, path, init, (res, url) => readCapped(res, svc, url));
  return { status, text: body };
}

/** Method, body, Accept header and the caller's signal of one request. */
export interface HttpInit {
  method?: string;
  body?: string;
  accept?: string;
  signal?: AbortSignal;
}

/**
 * Sends one request and reads a 2xx body with `read` (which must keep to
 * the service's cap: {@link readCapped}, `readJsonArrayPrefix`). Errors as
 * for {@link httpText}.
 */
export async function httpRead<T>(
  svc: HttpService,
  path: string,
  init: HttpInit,
  read: (res: Response, url: string) => Promise<T>,
): Promise<{ status: number; body: T }> {
  const url = `${svc.base}${path}`;
  const timeout = timeoutSignal(svc.timeoutMs, svc.timers);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: init.accept ?? "application/json" };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (svc.authorization) headers.authorization = svc.authorization;
  let res: Response;
  let body: T | undefined;
  let errorText = "";
  try {
    res = await fetch(url, { method: init.method ?? "GET", headers, body: init.body, signal });
    if (res.ok) body = await read(res, url);
    else errorText = await readErrorText(res);
  } catch (e) {
    if (
      e instanceof ResponseTooLargeError || e instanceof SyntaxError || e instanceof ReplyShapeError
    ) throw e;
    if (init.signal?.aborted) throw init.signal.reason;
    if (timeout.aborted) {
      throw new Error(
        `${svc.label} at ${svc.base} did not answer within ${svc.timeoutMs} ms; check the service or raise its timeout`,
      );
    }
    const why = errorMessage(e).split("\n")[0];
    throw new Error(
      `${svc.label} at ${svc.base} is unreachable (${why}); check the URL in the config`,
    );
  }
  if (!res.ok) {
    throw new HttpStatusError(
      `${svc.label} answered HTTP ${res.status} for ${path.split("?")[0]}${
        looksLikeHtml(errorText)
          ? ` with an HTML page`
          : errorText
          ? `: ${errorText.slice(0, 200).replace(/\s+/g, " ")}`
          : ""
      }`,
      res.status,
      errorText,
    );
  }
  return { status: res.status, body: body as T };
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
