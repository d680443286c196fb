/**
 * A loopback pvws gateway that speaks the wire format of spec §a: WebSocket
 * at `/pvws/pv`; `subscribe`/`clear`/`write`/`ping`/`echo`; a full first
 * update per PV then deltas only; no write acknowledgement; errors only for
 * writes; nothing at all for a PV that never connects; `"NaN"` with severity
 * UNDEFINED on a disconnect. Optional `GET /pvws/pvget` (pvws-springboot).
 * Fault and latency injection for tests; binds 127.0.0.1 and stops itself.
 *
 * @module
 */

/** A simulated PV. */
export interface FakePv {
  value: number | string | number[];
  vtype?: "VDouble" | "VInt" | "VEnum" | "VString" | "VDoubleArray";
  units?: string;
  precision?: number;
  description?: string;
  min?: number;
  max?: number;
  warn_low?: number;
  warn_high?: number;
  alarm_low?: number;
  alarm_high?: number;
  labels?: string[];
  readonly?: boolean;
  severity?: "NONE" | "MINOR" | "MAJOR" | "INVALID" | "UNDEFINED";
  /** Subscriptions get no message at all (IOC absent). */
  neverConnects?: boolean;
  /** Writes are accepted silently but the value never moves (a stuck actuator). */
  stuck?: boolean;
  /** Writes fail in the IOC: the gateway answers with an error message. */
  rejectsWrites?: boolean;
  /** A readback PV: it takes the value written to this setpoint PV, `lagMs` later, plus `offset`. */
  follows?: string;
  lagMs?: number;
  offset?: number;
}

export interface FakePvwsOptions {
  pvs: Record<string, FakePv>;
  /** Delay of every message in each direction, in ms. */
  latencyMs?: number;
  /** Serve `GET /pvws/pvget` like pvws-springboot (default false, like ORNL pvws). */
  pvget?: boolean;
  writeSupport?: boolean;
  /** Stop by itself after this long (default 120 s), so a failed test leaves nothing behind. */
  lifetimeMs?: number;
}

interface Client {
  ws: WebSocket;
  subs: Set<string>;
}

/** A running fake gateway. */
export class FakePvws implements AsyncDisposable {
  readonly pvs: Map<string, FakePv>;
  /** What the server received. */
  readonly stats = {
    subscribes: 0,
    messages: 0,
    pings: 0,
    writes: [] as { pv: string; value: unknown }[],
    /** Every PV name in every subscribe request, in order (repeats included). */
    subscribed: [] as string[],
  };
  /** When set, the next subscribe sends updates for half its PVs, then closes the socket. */
  dropOnNextSubscribe = false;
  /**
   * When set, every update frame is sent as the text this returns instead
   * (a gateway sending garbage); undefined sends the update as it is.
   */
  garble?: (update: Record<string, unknown>) => string | undefined;
  /**
   * Called with every write the server receives, before it acts on it: a
   * test's hook for what a hostile gateway does at that moment.
   */
  onWrite?: (pv: string, value: unknown) => void;
  /** PVs whose updates carry another value than the PV holds (see {@link lie}). */
  readonly #lies = new Map<string, number | string>();
  readonly #clients = new Set<Client>();
  readonly #server: Deno.HttpServer;
  readonly #opts: FakePvwsOptions;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #lags = new Set<ReturnType<typeof setTimeout>>();

  constructor(opts: FakePvwsOptions) {
    this.#opts = opts;
    this.pvs = new Map(Object.entries(structuredClone(opts.pvs)));
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => this.#handle(req),
    );
    this.#timer = setTimeout(() => this.close(), opts.lifetimeMs ?? 120_000);
  }

  /** Delay of every message from now on, in ms: the gateway slows down, or recovers. */
  set latencyMs(ms: number) {
    this.#opts.latencyMs = ms;
  }

  /** `http://127.0.0.1:PORT/pvws`, the `[epics] pvws_url`. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.addr as Deno.NetAddr).port}/pvws`;
  }

  /** Changes a PV as the IOC would; subscribers get a delta update. */
  set(name: string, value: number | string | number[], severity?: FakePv["severity"]): void {
    const pv = this.#pv(name);
    const changed = severity !== undefined && severity !== pv.severity;
    pv.value = value;
    if (severity !== undefined) pv.severity = severity;
    this.#broadcast(name, { ...this.#valueFields(pv, name), ...(changed ? { severity } : {}) });
  }

  /**
   * The gateway lies about a PV from now on: every update of it (the first
   * of a new subscription too) carries `value` — another channel's value,
   * say — while the PV itself keeps what it holds and takes writes as before.
   * `undefined`: it tells the truth again.
   */
  lie(name: string, value: number | string | undefined): void {
    if (value === undefined) this.#lies.delete(channelOf(name));
    else this.#lies.set(channelOf(name), value);
    this.#broadcast(name, this.#valueFields(this.#pv(name), name));
  }

  /** The IOC goes away: `"NaN"`, severity UNDEFINED, as Phoebus core-pv reports it. */
  disconnect(name: string): void {
    this.#broadcast(name, { value: "NaN", severity: "UNDEFINED", ...stamp() });
  }

  /** How many PVs the clients hold subscribed now. */
  subscribed(): number {
    let n = 0;
    for (const c of this.#clients) n += c.subs.size;
    return n;
  }

  /** Closes every client socket (the gateway restarts or a proxy drops them). */
  dropAll(): void {
    for (const c of this.#clients) c.ws.close();
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    for (const id of this.#lags) clearTimeout(id);
    this.dropAll();
    await this.#server.shutdown().catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * The PV a name reaches: the record, or a field of it (`X.DRVH`), served
   * as an IOC serves one, a number of its own, from its first request.
   */
  #find(name: string): FakePv | undefined {
    const channel = channelOf(name);
    const found = this.pvs.get(channel);
    if (found) return found;
    const field = /^(.+)\.([A-Z][A-Z0-9_]*)$/.exec(channel);
    const record = field ? this.pvs.get(field[1] as string) : undefined;
    if (!record || typeof record.value !== "number") return undefined;
    const pv: FakePv = { value: record.max ?? 10, units: record.units };
    this.pvs.set(channel, pv);
    return pv;
  }

  #pv(name: string): FakePv {
    const pv = this.#find(name);
    if (!pv) throw new Error(`no fake PV ${name}`);
    return pv;
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/pvws/pv" && req.headers.get("upgrade") === "websocket") {
      const { socket, response } = Deno.upgradeWebSocket(req);
      const client: Client = { ws: socket, subs: new Set() };
      socket.onopen = () => this.#clients.add(client);
      socket.onclose = () => this.#clients.delete(client);
      socket.onmessage = (ev) => {
        this.stats.messages++;
        this.#later(() => this.#onMessage(client, String(ev.data)));
      };
      return response;
    }
    if (url.pathname === "/pvws/pvget" && this.#opts.pvget) {
      const name = url.searchParams.get("name") ?? "";
      await new Promise((r) => setTimeout(r, 2 * (this.#opts.latencyMs ?? 0)));
      const pv = this.#find(name);
      // pvws-springboot answers 200 with an empty body when the PV does not connect.
      if (!pv || pv.neverConnects) return new Response("", { status: 200 });
      const { readonly: _, ...full } = this.#first(name, pv);
      return Response.json(full);
    }
    return new Response("Not Found", { status: 404 });
  }

  #later(fn: () => void): void {
    const ms = this.#opts.latencyMs ?? 0;
    if (ms <= 0) return queueMicrotask(fn);
    // Tracked, so a latency longer than the test ends with the server.
    const id = setTimeout(() => {
      this.#lags.delete(id);
      fn();
    }, ms);
    this.#lags.add(id);
  }

  #send(client: Client, msg: Record<string, unknown>): void {
    this.#later(() => {
      if (client.ws.readyState !== WebSocket.OPEN) return;
      const garbled = msg.type === "update" ? this.garble?.(msg) : undefined;
      client.ws.send(garbled ?? JSON.stringify(msg));
    });
  }

  #onMessage(client: Client, data: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(data);
    } catch {
      return; // the real server only logs malformed JSON
    }
    const pvs = Array.isArray(msg.pvs) ? msg.pvs.map(String) : [];
    switch (msg.type) {
      case "subscribe":
      case "monitor": {
        this.stats.subscribes++;
        this.stats.subscribed.push(...pvs);
        const fresh = pvs.filter((n) => !client.subs.has(n));
        const drop = this.dropOnNextSubscribe;
        this.dropOnNextSubscribe = false;
        const shown = drop ? fresh.slice(0, Math.floor(fresh.length / 2)) : fresh;
        for (const n of fresh) client.subs.add(n);
        for (const n of shown) {
          const pv = this.#find(n);
          if (pv && !pv.neverConnects) this.#send(client, this.#first(n, pv));
        }
        if (drop) this.#later(() => client.ws.close());
        return;
      }
      case "clear":
        for (const n of pvs) client.subs.delete(n);
        return;
      case "list":
        return this.#send(client, { type: "list", pvs: [...client.subs] });
      case "echo":
        return this.#send(client, msg);
      case "ping":
        // The real server answers with a WebSocket-level ping frame, which the client pongs by itself.
        this.stats.pings++;
        return;
      case "write":
        return this.#write(client, String(msg.pv), msg.value);
    }
  }

  /** Resolves once the server has received `n` writes (at once when it has). */
  writesReached(n: number): Promise<void> {
    if (this.stats.writes.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.#writeWaiters.push({ n, resolve }));
  }

  #writeWaiters: { n: number; resolve: () => void }[] = [];

  #write(client: Client, name: string, value: unknown): void {
    this.onWrite?.(name, value);
    this.stats.writes.push({ pv: name, value });
    const count = this.stats.writes.length;
    for (const w of this.#writeWaiters.filter((w) => w.n <= count)) w.resolve();
    this.#writeWaiters = this.#writeWaiters.filter((w) => w.n > count);
    if (this.#opts.writeSupport === false) {
      return this.#send(client, { type: "error", message: "PV_WRITE_SUPPORT is disabled" });
    }
    if (!client.subs.has(name)) {
      return this.#send(client, { type: "error", message: `Cannot write unknown PV ${name}` });
    }
    const pv = this.#pv(name);
    if (pv.readonly) {
      return this.#send(client, { type: "error", message: `Cannot write ${name}: read-only` });
    }
    if (pv.rejectsWrites) {
      return this.#send(client, {
        type: "error",
        message: `Write to ${name} failed: put rejected by the IOC`,
      });
    }
    if (pv.stuck) return;
    // JSON numbers are written as Double, anything else as text (spec §a.2).
    const next = typeof value === "number"
      ? (pv.vtype === "VString" ? String(value) : value)
      : pv.vtype === "VString"
      ? String(value)
      : Number(value);
    // A monitor (MDEL 0) posts nothing when the value does not change.
    if (next === pv.value) return;
    this.set(name, next as number | string);
    this.#follow(name, next as number | string);
  }

  /** Readback PVs of `setpoint` take its new value after their lag, off by their offset. */
  #follow(setpoint: string, value: number | string): void {
    for (const [name, pv] of this.pvs) {
      if (pv.follows !== setpoint) continue;
      const id = setTimeout(() => {
        this.#lags.delete(id);
        this.set(name, typeof value === "number" ? value + (pv.offset ?? 0) : value);
      }, pv.lagMs ?? 0);
      this.#lags.add(id);
    }
  }

  #broadcast(name: string, fields: Record<string, unknown>): void {
    for (const c of this.#clients) {
      for (const sub of c.subs) {
        if (channelOf(sub) === channelOf(name)) {
          this.#send(c, { type: "update", pv: sub, ...fields });
        }
      }
    }
  }

  #valueFields(pv: FakePv, name: string): Record<string, unknown> {
    const v = this.#lies.get(channelOf(name)) ?? pv.value;
    if (Array.isArray(v)) return { b64dbl: encodeDoubles(v), ...stamp() };
    if (pv.vtype === "VEnum") {
      return { value: v, text: pv.labels?.[Number(v)] ?? String(v), ...stamp() };
    }
    if (typeof v === "string") return { text: v, ...stamp() };
    return { value: Number.isFinite(v) ? v : "NaN", ...stamp() };
  }

  /** The first update: metadata, severity, readonly, value, time. */
  #first(name: string, pv: FakePv): Record<string, unknown> {
    const meta: Record<string, unknown> = { type: "update", pv: name };
    meta.vtype = pv.vtype ??
      (Array.isArray(pv.value)
        ? "VDoubleArray"
        : typeof pv.value === "string"
        ? "VString"
        : "VDouble");
    for (
      const k of [
        "units",
        "description",
        "precision",
        "min",
        "max",
        "warn_low",
        "warn_high",
        "alarm_low",
        "alarm_high",
        "labels",
      ] as const
    ) if (pv[k] !== undefined) meta[k] = pv[k];
    meta.severity = pv.severity ?? "NONE";
    meta.readonly = pv.readonly === true || this.#opts.writeSupport === false;
    return { ...meta, ...this.#valueFields(pv, name) };
  }
}

/**
 * The channel a name reaches, as a gateway resolves it: a protocol prefix
 * (`pva://`, `ca://`) picks the protocol, and `.VAL` (with a modifier or a
 * channel filter after it) is the record's value, so each reaches the record.
 */
export function channelOf(name: string): string {
  return name.replace(/^(pva|ca):\/\//i, "").replace(/\.VAL(\$|\[[^\]]*\]|\{.*\})?$/, "");
}

function stamp(): { seconds: number; nanos: number } {
  const ms = Date.now();
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 };
}

/** Base64 of little-endian float64s, as pvws sends `b64dbl`. */
export function encodeDoubles(values: number[]): string {
  const view = new DataView(new ArrayBuffer(values.length * 8));
  values.forEach((v, i) => view.setFloat64(i * 8, v, true));
  let s = "";
  for (const b of new Uint8Array(view.buffer)) s += String.fromCharCode(b);
  return btoa(s);
}

/** Starts a fake gateway. */
export function startFakePvws(opts: FakePvwsOptions): FakePvws {
  return new FakePvws(opts);
}
