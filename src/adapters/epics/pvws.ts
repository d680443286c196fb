/**
 * A client of the pvws WebSocket protocol (spec §a): one socket per gateway,
 * reused; subscriptions reference-counted so concurrent reads of one PV
 * share it (the server ignores a duplicate subscribe and would send no new
 * first update); updates merged per PV, because after the first one the
 * server sends only what changed; the cache dies with the socket. When the
 * socket drops, waiting calls fail at once and the client reconnects with
 * exponential backoff, subscribing again to every PV still in use.
 *
 * A PV given back stays subscribed for `lingerMs` and is read from its live
 * monitor if asked again meanwhile (pvws pushes every change, throttled by
 * the gateway's PV_THROTTLE_MS). Clears are sent late, after the next
 * subscribe or when the linger ends, for a reason measured here: a lone
 * `clear` gets no reply, so the server's delayed ACK (40 ms) holds the next
 * `subscribe` back behind it (Nagle), which made every read cost ~44 ms.
 *
 * @module
 */

import { realTimers, type Timers, unrefTimers } from "../../util/misc.ts";
import { parseFrame } from "./pvws_frame.ts";

/** A PV's merged update: the first message's metadata plus every later delta. */
export type PvState = Record<string, unknown>;

/** The fields that carry a value; an update with any of them replaces all of them. */
const VALUE_FIELDS = ["value", "text", "b64dbl", "b64flt", "b64int", "b64srt", "b64byt"];

/**
 * Merges a delta over the state. A new value in one field makes the others
 * stale (a disconnect's `"NaN"` after an array, an array after a `"NaN"`),
 * so they are dropped; metadata (units, limits, labels) carries over.
 */
export function mergeUpdate(state: PvState | undefined, msg: PvState): PvState {
  const merged = { ...state };
  if (VALUE_FIELDS.some((f) => f in msg)) { for (const f of VALUE_FIELDS) delete merged[f]; }
  return { ...merged, ...msg };
}

type Watcher = (state: PvState | undefined, error?: Error) => void;

interface Entry {
  refs: number;
  state?: PvState;
  watchers: Set<Watcher>;
  /** The gateway's last frame for this PV was garbage, and no good one came since. */
  malformed?: Error;
}

/** Options of {@link PvwsClient}. */
export interface PvwsOptions {
  /** WebSocket URL, e.g. `ws://gateway:8080/pvws/pv`. */
  url: string;
  connectTimeoutMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Send `{"type":"ping"}` after this long without sending (default 30 s), so proxies keep an idle socket. */
  keepaliveMs?: number;
  /** How long a released PV stays subscribed, in ms (0: cleared at once). */
  lingerMs?: number;
  /**
   * Largest message accepted from the gateway, in bytes (default 16 MiB). A
   * larger one closes the socket (code 1009), fails the waiting reads with a
   * message that says so, and the client reconnects as after any drop.
   * Deno's WebSocket has no payload limit of its own to set, so the size is
   * checked as each message arrives.
   */
  maxFrameBytes?: number;
  /**
   * The clock every wait of the client runs on (connect and read timeouts,
   * backoff, linger, keepalive); tests pass fake ones. Default: the real timers.
   */
  timers?: Timers;
}

/** Default of {@link PvwsOptions.maxFrameBytes}: 16 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The size in bytes of a WebSocket message, counting no further than needed. */
export function messageBytes(data: unknown, limit: number): number {
  if (typeof data === "string") {
    // UTF-8 takes one to three bytes per UTF-16 unit: encode only when that decides.
    if (data.length > limit || data.length * 3 <= limit) return data.length;
    return new TextEncoder().encode(data).byteLength;
  }
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (data instanceof Blob) return data.size;
  return 0;
}

/** Tomcat's default text-message limit is 8192 bytes; stay below it. */
const MAX_MESSAGE_BYTES = 8000;

type TimerId = ReturnType<typeof setTimeout>;

/** One pvws connection with its per-PV cache. */
export class PvwsClient {
  /** Messages sent, and subscribe messages among them (each costs one round trip). */
  readonly stats = { sent: 0, subscribes: 0 };
  #ws?: WebSocket;
  #opening?: Promise<WebSocket>;
  /** Ends the opening in progress (when the adapter is closed). */
  #cancelOpening?: () => void;
  #pvs = new Map<string, Entry>();
  #errorListeners = new Set<(message: string) => void>();
  #backoffMs: number;
  #retryAt = 0;
  #reconnectTimer?: TimerId;
  #closed = false;
  #lastError?: Error;
  /** A malformed frame for no PV in particular on this socket, named in "no value" errors. */
  #malformed?: string;
  #lastSent = 0;
  #keepalive?: TimerId;
  /** Released PVs still subscribed on the server, to clear later. */
  #lingering = new Set<string>();
  #clearTimer?: TimerId;
  readonly #timers: Timers;
  /** The keepalive's timers: the real ones do not keep the program running. */
  readonly #idleTimers: Timers;

  constructor(readonly opts: PvwsOptions) {
    this.#backoffMs = opts.reconnectMinMs;
    this.#timers = opts.timers ?? realTimers;
    this.#idleTimers = opts.timers ?? unrefTimers;
  }

  /**
   * Subscribes to `names` in one message (new ones only) and resolves with
   * each PV's merged state, or an Error for a PV with no update before the
   * deadline or when the socket drops. Throws when the gateway is down.
   * Every name must later be given back with {@link release}. `timeoutMs`
   * covers connecting too; `statedMs` is the timeout an error names, when the
   * caller spent part of it already.
   */
  async acquire(
    names: string[],
    timeoutMs: number,
    signal?: AbortSignal,
    statedMs = timeoutMs,
  ): Promise<Map<string, PvState | Error>> {
    const started = this.#timers.now();
    const ws = await this.#connect(signal, { ms: timeoutMs, stated: statedMs });
    const fresh: string[] = [];
    for (const name of names) {
      let entry = this.#pvs.get(name);
      if (!entry) {
        entry = { refs: 0, watchers: new Set() };
        this.#pvs.set(name, entry);
      }
      // A lingering PV is still subscribed: its monitor is live, no new subscribe.
      if (entry.refs++ === 0 && !this.#lingering.delete(name)) fresh.push(name);
    }
    this.#subscribe(ws, fresh);
    this.#flushClears();
    const left = Math.max(1, Math.round(timeoutMs - (this.#timers.now() - started)));
    return await this.#firstUpdates(names, left, statedMs, signal);
  }

  /** Gives names back; a PV nobody uses any more is cleared on the server. */
  release(names: string[]): void {
    for (const name of names) {
      const entry = this.#pvs.get(name);
      if (entry && --entry.refs <= 0) {
        entry.refs = 0;
        // Its socket dropped while it was in use: no subscription is left to keep.
        if (this.#ws?.readyState === WebSocket.OPEN) this.#lingering.add(name);
        else this.#pvs.delete(name);
      }
    }
    // No linger: clear at once, as the simplest client would (and pay the delayed ACK).
    if ((this.opts.lingerMs ?? 1000) === 0) return this.#flushClears();
    if (this.#lingering.size && this.#clearTimer === undefined) {
      this.#clearTimer = this.#timers.setTimeout(() => {
        this.#clearTimer = undefined;
        this.#flushClears();
      }, this.opts.lingerMs ?? 1000);
    }
  }

  /** Clears every lingering PV on the server and forgets it. */
  #flushClears(): void {
    if (!this.#lingering.size) return;
    const done = [...this.#lingering];
    this.#lingering.clear();
    for (const name of done) this.#pvs.delete(name);
    const ws = this.#ws;
    if (ws?.readyState === WebSocket.OPEN) {
      for (const chunk of chunks(done)) this.#send(ws, { type: "clear", pvs: chunk });
    }
  }

  /** The merged state of a PV in use, if an update arrived. */
  state(name: string): PvState | undefined {
    return this.#pvs.get(name)?.state;
  }

  /** Calls `fn` on every update of a PV in use (and with an Error when the socket drops). */
  watch(name: string, fn: Watcher): () => void {
    const entry = this.#pvs.get(name);
    if (!entry) throw new Error(`watch of "${name}" before acquire`);
    entry.watchers.add(fn);
    return () => entry.watchers.delete(fn);
  }

  /** Calls `fn` with the text of every `{"type":"error"}` message (write failures). */
  onError(fn: (message: string) => void): () => void {
    this.#errorListeners.add(fn);
    return () => this.#errorListeners.delete(fn);
  }

  /** Sends a write; the protocol has no acknowledgement, so callers watch the value. */
  write(name: string, value: number | string): void {
    const ws = this.#ws;
    if (ws?.readyState !== WebSocket.OPEN) {
      throw new Error(
        `the pvws connection to ${this.opts.url} is closed; write of ${name} not sent`,
      );
    }
    this.#send(ws, { type: "write", pv: name, value });
  }

  close(): void {
    this.#closed = true;
    this.#clear(this.#reconnectTimer);
    this.#clear(this.#clearTimer);
    this.#stopKeepalive();
    this.#cancelOpening?.();
    this.#ws?.close();
    this.#ws = undefined;
    // Reads and write confirmations still waiting end now, not at their deadlines.
    const closed = new Error("the EPICS adapter was closed");
    for (const entry of this.#pvs.values()) {
      for (const fn of [...entry.watchers]) fn(entry.state, closed);
    }
  }

  /** The open socket; a caller with a read `deadline` waits for an opening no longer than it. */
  async #connect(
    signal?: AbortSignal,
    deadline?: { ms: number; stated: number },
  ): Promise<WebSocket> {
    if (this.#closed) throw new Error("the EPICS adapter is closed");
    if (this.#ws?.readyState === WebSocket.OPEN) return this.#ws;
    signal?.throwIfAborted();
    // One opening is shared by every caller, so one caller's abort or deadline
    // does not end it (it ends by itself within connectTimeoutMs): that caller stops waiting.
    this.#opening ??= this.#open().finally(() => (this.#opening = undefined));
    const late = deadline && {
      ms: deadline.ms,
      error: () =>
        new Error(
          `pvws gateway at ${this.opts.url} did not accept a connection within the read timeout ` +
            `(${deadline.stated} ms); check [epics] pvws_url and the gateway`,
        ),
    };
    return await waitForOpening(this.#timers, this.#opening, signal, late);
  }

  async #open(): Promise<WebSocket> {
    // Inside the backoff window fail at once: waiting could outlast the caller's timeout.
    const wait = this.#retryAt - this.#timers.now();
    if (wait > 0 && this.#lastError) {
      throw new Error(`${this.#lastError.message} (next attempt in ${Math.ceil(wait)} ms)`);
    }
    const url = this.opts.url;
    try {
      const ws = await new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url);
        const fail = (why: string, hint = "; check [epics] pvws_url and the gateway") => {
          this.#timers.clearTimeout(timer);
          this.#cancelOpening = undefined;
          ws.onopen = ws.onerror = ws.onclose = null;
          try {
            ws.close();
          } catch { /* never opened */ }
          reject(new Error(`pvws gateway at ${url} ${why}${hint}`));
        };
        const timer = this.#timers.setTimeout(
          () => fail(`did not accept a connection within ${this.opts.connectTimeoutMs} ms`),
          this.opts.connectTimeoutMs,
        );
        ws.onopen = () => {
          this.#timers.clearTimeout(timer);
          this.#cancelOpening = undefined;
          resolve(ws);
        };
        this.#cancelOpening = () => fail("was not connected: the EPICS adapter was closed", "");
        ws.onerror = (e) => fail(`is unreachable (${(e as ErrorEvent).message ?? "error"})`);
        ws.onclose = () => fail("closed the connection");
      });
      if (this.#closed) {
        // Closed between the socket opening and this continuation.
        ws.onopen = ws.onerror = ws.onclose = null;
        ws.close();
        throw new Error("the EPICS adapter is closed");
      }
      ws.onmessage = (ev) => this.#onMessage(ws, ev.data);
      let socketError = "";
      ws.onclose = () =>
        this.#onClose(
          ws,
          // Deno's own WebSocket limit: it drops a message above 64 MiB before we see it.
          /frame too large/i.test(socketError)
            ? this.#frameError("a message over Deno's 64 MiB WebSocket limit")
            : undefined,
        );
      ws.onerror = (e) => {
        socketError = (e as ErrorEvent).message ?? "";
      };
      this.#ws = ws;
      this.#malformed = undefined;
      this.#startKeepalive(ws);
      this.#backoffMs = this.opts.reconnectMinMs;
      this.#retryAt = 0;
      this.#lastError = undefined;
      return ws;
    } catch (e) {
      this.#lastError = asError(e);
      this.#retryAt = this.#timers.now() + this.#backoffMs;
      this.#backoffMs = Math.min(this.opts.reconnectMaxMs, this.#backoffMs * 2);
      throw e;
    }
  }

  #onMessage(ws: WebSocket, data: unknown): void {
    const limit = this.opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    const size = messageBytes(data, limit);
    if (size > limit) return this.#refuseFrame(ws, size, limit);
    const frame = parseFrame(data);
    if (frame.kind === "error") {
      for (const fn of this.#errorListeners) fn(frame.message);
      return;
    }
    if (frame.kind === "malformed") {
      // Garbage is never merged; a PV waiting for a value hears what came instead.
      const why = `the pvws gateway at ${this.opts.url} sent a malformed frame (${frame.why})`;
      const entry = frame.pv === undefined ? undefined : this.#pvs.get(frame.pv);
      if (!entry) {
        this.#malformed = why;
        return;
      }
      entry.malformed = new Error(why);
      for (const fn of [...entry.watchers]) fn(entry.state, entry.malformed);
      return;
    }
    if (frame.kind !== "update") return;
    const entry = this.#pvs.get(frame.pv);
    if (!entry) return;
    entry.malformed = undefined;
    entry.state = mergeUpdate(entry.state, frame.msg);
    for (const fn of [...entry.watchers]) fn(entry.state);
  }

  /** Every `keepaliveMs`, a ping if nothing was sent meanwhile; ends with the socket. */
  #startKeepalive(ws: WebSocket): void {
    const every = this.opts.keepaliveMs ?? 30_000;
    const timers = this.#idleTimers;
    this.#stopKeepalive();
    const tick = () => {
      if (this.#ws !== ws) return;
      if (ws.readyState === WebSocket.OPEN && timers.now() - this.#lastSent >= every) {
        this.#send(ws, { type: "ping" });
      }
      this.#keepalive = timers.setTimeout(tick, every);
    };
    this.#keepalive = timers.setTimeout(tick, every);
  }

  #stopKeepalive(): void {
    if (this.#keepalive !== undefined) this.#idleTimers.clearTimeout(this.#keepalive);
    this.#keepalive = undefined;
  }

  #clear(id: TimerId | undefined): void {
    if (id !== undefined) this.#timers.clearTimeout(id);
  }

  /** Closes a socket that sent an oversized message; its reads fail with the reason. */
  #refuseFrame(ws: WebSocket, size: number, limit: number): void {
    ws.onmessage = ws.onclose = null;
    try {
      ws.close(1009, "message too big");
    } catch { /* already closing */ }
    const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB`;
    this.#onClose(
      ws,
      this.#frameError(`a ${mib(size)} message, over the ${mib(limit)} limit`),
    );
  }

  #frameError(what: string): Error {
    return new Error(
      `pvws gateway at ${this.opts.url} sent ${what} ([epics] pvws_max_frame_bytes); the ` +
        `connection was closed and will be reopened — read fewer or smaller PVs, or raise the limit`,
    );
  }

  #onClose(ws: WebSocket, reason?: Error): void {
    if (this.#ws !== ws) return;
    this.#ws = undefined;
    this.#stopKeepalive();
    const lost = reason ??
      new Error(`the connection to the pvws gateway at ${this.opts.url} dropped`);
    // Subscriptions ended with the socket: lingering PVs are simply forgotten.
    for (const name of this.#lingering) this.#pvs.delete(name);
    this.#lingering.clear();
    for (const entry of this.#pvs.values()) {
      entry.state = undefined;
      for (const fn of [...entry.watchers]) fn(undefined, lost);
    }
    this.#scheduleReconnect();
  }

  /** Reconnects in the background while PVs are in use, and subscribes to them again. */
  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnectTimer !== undefined || this.#pvs.size === 0) return;
    this.#reconnectTimer = this.#timers.setTimeout(async () => {
      this.#reconnectTimer = undefined;
      if (this.#pvs.size === 0) return;
      try {
        const ws = await this.#connect();
        this.#subscribe(ws, [...this.#pvs.keys()]);
      } catch {
        this.#scheduleReconnect();
      }
    }, Math.max(this.#backoffMs, this.#retryAt - this.#timers.now()));
  }

  #subscribe(ws: WebSocket, names: string[]): void {
    for (const chunk of chunks(names)) {
      this.stats.subscribes++;
      this.#send(ws, { type: "subscribe", pvs: chunk });
    }
  }

  #send(ws: WebSocket, msg: Record<string, unknown>): void {
    this.stats.sent++;
    this.#lastSent = this.#timers.now();
    ws.send(JSON.stringify(msg));
  }

  #firstUpdates(
    names: string[],
    timeoutMs: number,
    statedMs: number,
    signal?: AbortSignal,
  ): Promise<Map<string, PvState | Error>> {
    return new Promise((resolve) => {
      const out = new Map<string, PvState | Error>();
      const pending = new Set<string>();
      const unwatch: (() => void)[] = [];
      for (const name of names) {
        const entry = this.#pvs.get(name);
        // After a garbage delta the held state is stale: the PV's value is unknown.
        if (entry?.malformed) out.set(name, entry.malformed);
        else if (entry?.state) out.set(name, entry.state);
        else pending.add(name);
      }
      const finish = () => {
        this.#timers.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        for (const u of unwatch) u();
        resolve(out);
      };
      const onAbort = () => {
        for (const name of pending) out.set(name, asError(signal?.reason));
        pending.clear();
        finish();
      };
      const timer = this.#timers.setTimeout(() => {
        // A gateway that sent garbage may have meant it for these PVs: that is what to report.
        const why = this.#malformed
          ? `${this.#malformed} and no update for this PV`
          : "the PV did not connect through the gateway";
        for (const name of pending) {
          out.set(name, new Error(`no value within ${statedMs} ms: ${why}`));
        }
        pending.clear();
        finish();
      }, timeoutMs);
      for (const name of pending) {
        unwatch.push(this.watch(name, (state, error) => {
          if (!pending.delete(name)) return;
          out.set(name, error ?? state ?? new Error("no value"));
          if (pending.size === 0) finish();
        }));
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort(); // aborted while the socket was opening
      else if (pending.size === 0) finish();
    });
  }
}

function* chunks(names: string[]): Generator<string[]> {
  let chunk: string[] = [];
  let bytes = 40;
  for (const name of names) {
    const size = name.length + 3;
    if (chunk.length && bytes + size > MAX_MESSAGE_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 40;
    }
    chunk.push(name);
    bytes += size;
  }
  if (chunk.length) yield chunk;
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason ?? "aborted"));
}

/**
 * `opening`, or a rejection as soon as the signal is aborted (with its
 * reason) or `late.ms` have passed (with `late.error()`).
 */
function waitForOpening<T>(
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
