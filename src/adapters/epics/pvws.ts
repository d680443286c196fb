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
import {
  chunks,
  DEFAULT_MAX_FRAME_BYTES,
  mergeUpdate,
  messageBytes,
  mib,
  type PvState,
} from "./pvws_messages.ts";
import { Backoff, Keepalive, openSocket, waitForOpening } from "./pvws_socket.ts";
import { firstUpdates, PvTable, type Watcher } from "./pvws_reads.ts";

export {
  DEFAULT_MAX_FRAME_BYTES,
  mergeUpdate,
  messageBytes,
  type PvState,
} from "./pvws_messages.ts";
export type { Watcher } from "./pvws_reads.ts";

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

type TimerId = ReturnType<typeof setTimeout>;

/** One pvws connection with its per-PV cache. */
export class PvwsClient {
  /** Messages sent, and subscribe messages among them (each costs one round trip). */
  readonly stats = { sent: 0, subscribes: 0 };
  #ws?: WebSocket;
  #opening?: Promise<WebSocket>;
  /** Ends the opening in progress (when the adapter is closed). */
  #cancelOpening?: () => void;
  readonly #table = new PvTable();
  /** The entries of the PVs in use, by name. */
  readonly #pvs = this.#table.entries;
  #errorListeners = new Set<(message: string) => void>();
  readonly #backoff: Backoff;
  #reconnectTimer?: TimerId;
  #closed = false;
  /** A malformed frame for no PV in particular on this socket, named in "no value" errors. */
  #malformed?: string;
  #lastSent = 0;
  readonly #keepalive: Keepalive;
  #clearTimer?: TimerId;
  readonly #timers: Timers;

  constructor(readonly opts: PvwsOptions) {
    this.#timers = opts.timers ?? realTimers;
    this.#backoff = new Backoff(opts.reconnectMinMs, opts.reconnectMaxMs, this.#timers);
    // The keepalive's real timers do not keep the program running.
    this.#keepalive = new Keepalive(opts.keepaliveMs ?? 30_000, opts.timers ?? unrefTimers);
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
    this.#subscribe(ws, this.#table.take(names));
    this.#flushClears();
    const left = Math.max(1, Math.round(timeoutMs - (this.#timers.now() - started)));
    return await firstUpdates({
      names,
      pvs: this.#pvs,
      watch: (name, fn) => this.watch(name, fn),
      timers: this.#timers,
      timeoutMs: left,
      statedMs,
      malformedNote: () => this.#malformed,
      signal,
    });
  }

  /** Gives names back; a PV nobody uses any more is cleared on the server. */
  release(names: string[]): void {
    const lingers = this.#table.give(names, this.#ws?.readyState === WebSocket.OPEN);
    // No linger: clear at once, as the simplest client would (and pay the delayed ACK).
    if ((this.opts.lingerMs ?? 1000) === 0) return this.#flushClears();
    if (lingers && this.#clearTimer === undefined) {
      this.#clearTimer = this.#timers.setTimeout(() => {
        this.#clearTimer = undefined;
        this.#flushClears();
      }, this.opts.lingerMs ?? 1000);
    }
  }

  /** Clears every lingering PV on the server and forgets it. */
  #flushClears(): void {
    const done = this.#table.dropLingering();
    if (!done.length) return;
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
    this.#keepalive.stop();
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
    this.#backoff.check();
    const url = this.opts.url;
    try {
      const ws = await openSocket(
        url,
        this.opts.connectTimeoutMs,
        this.#timers,
        (cancel) => (this.#cancelOpening = cancel),
      );
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
      this.#keepalive.start(ws, () => this.#ws, () => this.#lastSent, () => {
        this.#send(ws, { type: "ping" });
      });
      this.#backoff.succeeded();
      return ws;
    } catch (e) {
      this.#backoff.failed(e);
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

  #clear(id: TimerId | undefined): void {
    if (id !== undefined) this.#timers.clearTimeout(id);
  }

  /** Closes a socket that sent an oversized message; its reads fail with the reason. */
  #refuseFrame(ws: WebSocket, size: number, limit: number): void {
    ws.onmessage = ws.onclose = null;
    try {
      ws.close(1009, "message too big");
    } catch { /* already closing */ }
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
    this.#keepalive.stop();
    const lost = reason ??
      new Error(`the connection to the pvws gateway at ${this.opts.url} dropped`);
    // Subscriptions ended with the socket: lingering PVs are simply forgotten.
    this.#table.dropLingering();
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
    }, this.#backoff.nextDelayMs());
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
}
