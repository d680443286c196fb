/**
 * Reading a facility service's response body without trusting it: at most a
 * configured number of bytes, read as it arrives and cancelled the moment
 * the cap is passed, so an endless or huge body costs no more memory than
 * the cap; and, for JSON arrays, only as many elements as were asked for.
 *
 * @module
 */
import type { Timers } from "../util/misc.ts";

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
   * Largest response body read, in bytes (default 64 MiB). A longer body
   * aborts the request with {@link ResponseTooLargeError}.
   */
  maxBytes?: number;
  /** The config key that sets `maxBytes`, named in the error ("[epics] archiver_max_bytes"). */
  maxBytesKey?: string;
  /** The clock of the call's deadline; tests pass fake ones. Default: real timers. */
  timers?: Timers;
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
  const tooLarge = (received: number) => tooLargeError(svc, url, limit, received);
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

function tooLargeError(
  svc: HttpService,
  url: string,
  limit: number,
  received: number,
): ResponseTooLargeError {
  return new ResponseTooLargeError(
    `${svc.label} at ${url.split("?")[0]}: the response exceeded ${formatBytes(limit)}${
      svc.maxBytesKey ? ` (${svc.maxBytesKey})` : ""
    }; ask for less (narrow the time range or the pattern) or raise the limit`,
    limit,
    received,
  );
}

/** The first elements of a JSON array body, and whether the body held more. */
export interface ArrayPrefix {
  items: unknown[];
  /** True when the array had more than the elements asked for (the rest was not read). */
  more: boolean;
  /** The parsed body when it was not an array (then `items` is empty). */
  whole?: unknown;
}

/**
 * Reads the first `maxItems` elements of a body that is a JSON array and
 * cancels the rest, so a service that ignores a page size sends a page and
 * not a million rows; the byte cap still holds for what is read. A body that
 * is not an array is read whole (within the cap), parsed, and returned as
 * `whole` (by `parseWhole`, JSON.parse unless given).
 */
export async function readJsonArrayPrefix(
  res: Response,
  svc: HttpService,
  url: string,
  maxItems: number,
  parseWhole: (text: string) => unknown = JSON.parse,
): Promise<ArrayPrefix> {
  const limit = svc.maxBytes ?? DEFAULT_MAX_BYTES;
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => {});
    throw tooLargeError(svc, url, limit, declared);
  }
  if (!res.body) return { items: [], more: false };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const scan = new ArrayScanner(maxItems);
  let received = 0;
  let head = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (!done) {
        received += value.byteLength;
        if (received > limit) throw tooLargeError(svc, url, limit, received);
      }
      if (scan.state === "start") {
        head += text;
        const first = head.trimStart()[0];
        if (first === undefined && !done) continue;
        if (first !== "[") {
          // Not an array: the whole (capped) body is the answer.
          head += await rest(reader, decoder, limit, received, svc, url);
          return { items: [], more: false, whole: parseWhole(head) };
        }
        scan.feed(head);
      } else scan.feed(text);
      if (scan.state === "full" || scan.state === "end" || done) break;
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  if (scan.state !== "full" && scan.state !== "end") {
    throw new SyntaxError(`${svc.label} at ${url.split("?")[0]} sent a JSON array that ends early`);
  }
  return { items: scan.items, more: scan.state === "full" && scan.more };
}

async function rest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  decoder: TextDecoder,
  limit: number,
  received: number,
  svc: HttpService,
  url: string,
): Promise<string> {
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    received += value.byteLength;
    if (received > limit) throw tooLargeError(svc, url, limit, received);
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Splits a JSON array into its top-level elements as text arrives: tracks
 * nesting, strings and escapes, and parses each element when it closes.
 */
class ArrayScanner {
  state: "start" | "items" | "full" | "end" = "start";
  items: unknown[] = [];
  /** Whether an element beyond `maxItems` began. */
  more = false;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #element = "";

  constructor(readonly maxItems: number) {}

  feed(text: string): void {
    const n = text.length;
    /** Start of the part of `text` not yet added to the element. */
    let from = 0;
    let i = 0;
    while (i < n) {
      if (this.state === "start") {
        const c = text[i] as string;
        if (c === "[") this.state = "items";
        else if (!isSpace(c)) throw new SyntaxError(`expected a JSON array, got "${c}"`);
        from = ++i;
        continue;
      }
      if (this.state !== "items") return;
      if (this.#inString) {
        // Jump to the next quote or backslash: strings are most of the bytes.
        if (this.#escaped) {
          this.#escaped = false;
          i++;
          continue;
        }
        const quote = text.indexOf('"', i), slash = text.indexOf("\\", i);
        if (slash !== -1 && (quote === -1 || slash < quote)) {
          this.#escaped = true;
          i = slash + 1;
        } else if (quote !== -1) {
          this.#inString = false;
          i = quote + 1;
        } else i = n;
        continue;
      }
      const c = text[i] as string;
      if (this.#depth === 0 && (c === "," || c === "]")) {
        this.#element += text.slice(from, i);
        this.#close();
        from = ++i;
        if (c === "]") this.state = "end";
        continue;
      }
      if (this.items.length === this.maxItems && !isSpace(c)) {
        // An element past the page began: that is all we need to know.
        this.more = true;
        this.state = "full";
        return;
      }
      if (c === '"') this.#inString = true;
      else if (c === "{" || c === "[") this.#depth++;
      else if (c === "}" || c === "]") this.#depth--;
      i++;
    }
    if (this.state === "items") this.#element += text.slice(from, n);
  }

  #close(): void {
    const text = this.#element.trim();
    this.#element = "";
    if (text) this.items.push(JSON.parse(text));
  }
}

function isSpace(c: string): boolean {
  return c === " " || c === "\n" || c === "\r" || c === "\t";
}

/**
 * The start of an error page: at most `maxBytes` (default 64 KiB) are read
 * and the rest is dropped, so an HTTP error is reported as such however
 * long its page is.
 */
export async function readErrorText(res: Response, maxBytes = 64 * 1024): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    while (received < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value.subarray(0, maxBytes - received));
      received += value.byteLength;
    }
  } catch {
    // A page that breaks off is still worth its first bytes.
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}
