/**
 * A TCP syslog collector on loopback, as rsyslog's imtcp or syslog-ng's
 * network() source receive: octet-counted frames (RFC 6587) of RFC 5424
 * messages, the connection closed when the sender's end is read. It records
 * every message whole (and parses our structured data), and can misbehave
 * as real collectors do: stop and come back on the same port, accept and
 * never read, reset a connection after reading a little, or leave
 * connections waiting in the listen queue before accepting them.
 *
 * @module
 */
import { waitFor } from "../run_agent.ts";

/** One message as received. */
export interface SyslogMessage {
  raw: string;
  pri: number;
  /** `seq`, `hash`, `resent`, `truncated` of `[accel@32473 …]`. */
  sd: Record<string, string>;
  /** The JSON after the BOM: the audit entry. */
  entry: Record<string, unknown>;
}

export type CollectorMode =
  /** Read everything, close on the sender's end. */
  | "normal"
  /** Accept, never read, never close. */
  | "hang"
  /** Read a few bytes, then close with data unread (the kernel resets the connection). */
  | "reset"
  /** Leave connections in the listen queue (not accepted) until the mode changes. */
  | "slow-accept";

export class FakeSyslog implements AsyncDisposable {
  readonly messages: SyslogMessage[] = [];
  /** Frames that did not parse (a cut connection's tail), as text. */
  readonly broken: string[] = [];
  mode: CollectorMode = "normal";
  /** Connections accepted so far. */
  accepted = 0;
  #listener: Deno.TcpListener | undefined;
  #conns = new Set<Deno.TcpConn>();
  #port = 0;

  /** Starts listening on a free port of 127.0.0.1 (or `port`). */
  static start(port = 0): FakeSyslog {
    const s = new FakeSyslog();
    s.listen(port);
    return s;
  }

  get port(): number {
    return this.#port;
  }

  /** `host:port` as the site file names it. */
  get address(): string {
    return `127.0.0.1:${this.#port}`;
  }

  listen(port = this.#port): void {
    const listener = Deno.listen({ hostname: "127.0.0.1", port });
    this.#listener = listener;
    this.#port = (listener.addr as Deno.NetAddr).port;
    void this.#acceptLoop(listener);
  }

  /** Stops listening and drops every connection, as a collector that goes down. */
  stop(): void {
    try {
      this.#listener?.close();
    } catch { /* closed */ }
    this.#listener = undefined;
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    this.#conns.clear();
  }

  /** Comes back on the same port. */
  restart(): void {
    this.listen(this.#port);
  }

  /** The `seq` of every message received, in order. */
  seqs(): number[] {
    return this.messages.map((m) => Number(m.sd.seq));
  }

  /** Resolves once `n` messages have come (a ceiling for a program that never sends them). */
  async received(n: number, ms = 60_000): Promise<void> {
    await waitFor(() => this.messages.length >= n, ms, `${n} syslog messages`);
  }

  async #acceptLoop(listener: Deno.TcpListener): Promise<void> {
    while (true) {
      while (this.mode === "slow-accept" && this.#listener === listener) {
        await new Promise((r) => setTimeout(r, 20));
      }
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept();
      } catch {
        return; // the listener was closed
      }
      this.accepted++;
      this.#conns.add(conn);
      void this.#serve(conn).finally(() => this.#conns.delete(conn));
    }
  }

  async #serve(conn: Deno.TcpConn): Promise<void> {
    const mode = this.mode;
    if (mode === "hang") return; // accepted, never read: the sender's buffers fill
    let pending: Uint8Array<ArrayBuffer> = new Uint8Array(0);
    // Resetting: a read of a few bytes leaves the rest unread, so the close is a reset.
    const buf = new Uint8Array(mode === "reset" ? 16 : 64 * 1024);
    try {
      while (true) {
        const n = await conn.read(buf);
        if (n === null) break;
        if (mode === "reset") {
          conn.close(); // data left unread: the kernel answers with a reset
          return;
        }
        const next = new Uint8Array(pending.length + n);
        next.set(pending);
        next.set(buf.subarray(0, n), pending.length);
        pending = this.#frames(next);
      }
      if (pending.length) this.broken.push(new TextDecoder().decode(pending));
      conn.close();
    } catch {
      // A connection reset or closed by stop().
    }
  }

  /** Takes every whole frame off `bytes`; returns what is left. */
  #frames(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
    let off = 0;
    while (true) {
      const space = bytes.indexOf(0x20, off);
      if (space < 0) break;
      const len = Number(new TextDecoder().decode(bytes.subarray(off, space)));
      if (!Number.isInteger(len) || len <= 0) {
        this.broken.push(new TextDecoder().decode(bytes.subarray(off)));
        return new Uint8Array(0);
      }
      if (bytes.length < space + 1 + len) break;
      this.messages.push(
        parse(new TextDecoder().decode(bytes.subarray(space + 1, space + 1 + len))),
      );
      off = space + 1 + len;
    }
    return bytes.slice(off);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.stop();
    await Promise.resolve();
  }
}

/** An RFC 5424 message: `<PRI>1 TIME HOST APP PROCID MSGID [SD] BOM JSON`. */
export function parse(raw: string): SyslogMessage {
  const m =
    /^<(\d+)>1 \S+ \S+ \S+ \S+ \S+ \[accel@32473((?: [a-z]+="(?:[^"\\\]]|\\.)*")*)\] \ufeff(.*)$/s
      .exec(raw);
  if (!m) throw new Error(`not an RFC 5424 message of ours: ${raw.slice(0, 200)}`);
  const sd: Record<string, string> = {};
  for (const p of (m[2] ?? "").matchAll(/([a-z]+)="((?:[^"\\\]]|\\.)*)"/g)) {
    sd[p[1] as string] = (p[2] as string).replace(/\\(.)/g, "$1");
  }
  return { raw, pri: Number(m[1]), sd, entry: JSON.parse(m[3] as string) };
}

/** Waits until `cond` holds, polling (for a state of the collector). */
export function until(cond: () => boolean, what: string): Promise<void> {
  return waitFor(cond, 60_000, what);
}
