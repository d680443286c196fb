/**
 * EPICS through web services: live values through a pvws gateway (spec §a),
 * history from the Archiver Appliance (§d), names from ChannelFinder (§e) or
 * the archiver, the e-log from Olog (§f) and alarms from the alarm logger
 * (§g). Every service is optional; a call needing a missing one says which
 * `[epics]` key to set.
 *
 * @example
 * ```ts
 * import { createEpics } from "./mod.ts";
 * const cs = createEpics({ pvwsUrl: "http://gateway:8080/pvws", archiverUrl: "http://arch:17668/retrieval" });
 * const readings = await cs.read(["SR:C01:BPM1:X", "SR:C01:BPM1:Y"]);
 * await cs.close();
 * ```
 *
 * @module
 */
import type { ArchiveQuery, ControlSystem, DeviceQuery, LogQuery } from "../adapter.ts";
import type { DeviceInfo, DevicePage, LogEntry, Reading, Series, Value } from "../adapter.ts";
import { wildcard } from "../adapter.ts";
import { type HttpService, HttpStatusError, httpText, trimBase } from "../http.ts";
import { jsonReply, shaped } from "../reply.ts";
import { alarmEntries } from "./alarm_log.ts";
import { archiverData, matchingPvs } from "./archiver.ts";
import { channelFinderSearch } from "./channelfinder.ts";
import { ologEntries } from "./olog.ts";
import { infoOf, readingOf, subsystemOf } from "./pv_value.ts";
import { type PvState, PvwsClient } from "./pvws.ts";
import { PvFieldsSchema } from "./pvws_frame.ts";
import { confirmWrite } from "./write.ts";
import { namingFor, requireCanonical } from "../device_names.ts";
import { asError } from "../../util/errors.ts";
import { realTimers, timeoutSignal, type Timers } from "../../util/misc.ts";

/** Where the services are and how long to wait for them. */
export interface EpicsOptions {
  /** pvws context URL, e.g. `http://gateway:8080/pvws`; the socket is `<url>/pv`. */
  pvwsUrl?: string;
  /** Use the HTTP `GET <pvws>/pvget` of pvws-springboot: probe once ("auto"), always, never. */
  pvget?: "auto" | "on" | "off";
  /** Prepended to every PV name sent to the gateway, e.g. `pva://`. */
  pvPrefix?: string;
  archiverUrl?: string;
  channelFinderUrl?: string;
  ologUrl?: string;
  alarmLoggerUrl?: string;
  /** Authorization header for Olog and ChannelFinder, built from environment variables. */
  authorization?: string;
  readTimeoutMs?: number;
  writeTimeoutMs?: number;
  /** A write is confirmed when |value − target| ≤ tolerance × max(1, |target|). */
  writeTolerance?: number;
  connectTimeoutMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** How long a PV stays monitored after a read, answering repeat reads from its live value. */
  monitorLingerMs?: number;
  httpTimeoutMs?: number;
  /** Largest response body read from each HTTP service (`[epics] <service>_max_bytes`). */
  maxBytes?: Partial<Record<EpicsHttpService, number>>;
  /** Largest pvws WebSocket message accepted (`[epics] pvws_max_frame_bytes`). */
  pvwsMaxFrameBytes?: number;
  /** The clock of the adapter's waits (read and write deadlines, the pvws client's timers); tests pass fake ones. */
  timers?: Timers;
}

const EPICS_NAMING = namingFor("epics");

/** The HTTP services of an EPICS facility. */
export type EpicsHttpService = "pvget" | "archiver" | "channelfinder" | "olog" | "alarm";

/** The config key of each service's body cap, named in errors. */
const MAX_BYTES_KEY: Record<EpicsHttpService, string> = {
  pvget: "[epics] pvget_max_bytes",
  archiver: "[epics] archiver_max_bytes",
  channelfinder: "[epics] channelfinder_max_bytes",
  olog: "[epics] olog_max_bytes",
  alarm: "[epics] alarm_logger_max_bytes",
};

/** The EPICS backend. */
export class Epics implements ControlSystem {
  readonly kind = "epics";
  /** The pvws connection (exposed for statistics: round trips in benches and tests). */
  readonly pvws?: PvwsClient;
  readonly #o: Required<Pick<EpicsOptions, "readTimeoutMs" | "writeTimeoutMs" | "writeTolerance">>;
  readonly #prefix: string;
  #pvget: "auto" | "on" | "off";
  /** A pvget probe that failed on the network is not repeated before this time. */
  #pvgetProbeAfter = 0;
  readonly #svc: Partial<Record<EpicsHttpService, HttpService>> = {};
  readonly #timers?: Timers;

  constructor(opts: EpicsOptions) {
    this.#o = {
      readTimeoutMs: opts.readTimeoutMs ?? 5000,
      writeTimeoutMs: opts.writeTimeoutMs ?? 5000,
      writeTolerance: opts.writeTolerance ?? 1e-6,
    };
    this.#prefix = opts.pvPrefix ?? "";
    this.#timers = opts.timers;
    this.#pvget = opts.pvget ?? "auto";
    const timeoutMs = opts.httpTimeoutMs ?? 10_000;
    const caps = (key: EpicsHttpService) => ({
      maxBytes: opts.maxBytes?.[key],
      maxBytesKey: MAX_BYTES_KEY[key],
    });
    const svc = (
      key: EpicsHttpService,
      label: string,
      url: string | undefined,
      authorization?: string,
    ) =>
      url
        ? {
          label,
          base: trimBase(url),
          timeoutMs,
          authorization,
          timers: opts.timers,
          ...caps(key),
        }
        : undefined;
    if (opts.pvwsUrl) {
      const base = trimBase(opts.pvwsUrl);
      this.pvws = new PvwsClient({
        url: `${base.replace(/^http/, "ws")}/pv`,
        connectTimeoutMs: opts.connectTimeoutMs ?? Math.min(5000, this.#o.readTimeoutMs),
        reconnectMinMs: opts.reconnectMinMs ?? 250,
        reconnectMaxMs: opts.reconnectMaxMs ?? 10_000,
        lingerMs: opts.monitorLingerMs ?? 1000,
        maxFrameBytes: opts.pvwsMaxFrameBytes,
        timers: opts.timers,
      });
      this.#svc.pvget = {
        label: "pvws pvget",
        base,
        timeoutMs: this.#o.readTimeoutMs + 1000,
        timers: opts.timers,
        ...caps("pvget"),
      };
    }
    this.#svc.archiver = svc("archiver", "archiver", opts.archiverUrl);
    this.#svc.channelfinder = svc(
      "channelfinder",
      "ChannelFinder",
      opts.channelFinderUrl,
      opts.authorization,
    );
    this.#svc.olog = svc("olog", "Olog", opts.ologUrl, opts.authorization);
    this.#svc.alarm = svc("alarm", "alarm logger", opts.alarmLoggerUrl);
  }

  async read(names: string[], signal?: AbortSignal): Promise<Reading[]> {
    const states = await this.#states(names, signal);
    return names.map((name) => {
      const s = states.get(name);
      return s instanceof Error || s === undefined ? failed(name, s) : readingOf(name, s);
    });
  }

  /** Refuses a name that is not canonical (`pva://X`, `X.VAL`, `X.VAL$`…) before anything is sent. */
  async write(name: string, value: Value, signal?: AbortSignal): Promise<void> {
    requireCanonical(EPICS_NAMING, name);
    const pvws = this.#needPvws();
    const pv = this.#prefix + name;
    const got = (await pvws.acquire([pv], this.#o.readTimeoutMs, signal)).get(pv);
    try {
      if (!got || got instanceof Error) {
        throw new Error(`write to ${name} not sent: ${got?.message ?? "no value"}`);
      }
      await confirmWrite(pvws, name, pv, value, {
        timeoutMs: this.#o.writeTimeoutMs,
        tolerance: this.#o.writeTolerance,
        signal,
        timers: this.#timers,
      });
    } finally {
      pvws.release([pv]);
    }
  }

  async describe(names: string[], signal?: AbortSignal): Promise<DeviceInfo[]> {
    const states = await this.#states(names, signal, true);
    return names.map((name) => {
      const s = states.get(name);
      if (s && !(s instanceof Error)) return infoOf(name, s);
      return {
        device: name,
        exists: false,
        description: s?.message ?? "no value",
        units: "",
        writable: false,
        type: "number",
        subsystem: subsystemOf(name),
      };
    });
  }

  async search(q: DeviceQuery, signal?: AbortSignal): Promise<DevicePage> {
    if (this.#svc.channelfinder) {
      return await channelFinderSearch(this.#svc.channelfinder, q, signal);
    }
    if (!this.#svc.archiver) {
      throw new Error("no name service configured: set [epics] channelfinder_url or archiver_url");
    }
    // Fallback: the archiver's names, paged here (it knows no units or writability).
    const offset = Math.max(0, q.offset ?? 0), limit = Math.max(0, q.limit ?? 50);
    const subsystem = q.subsystem?.toUpperCase();
    const re = wildcard(q.pattern || "*");
    const names = (await matchingPvs(this.#svc.archiver, q.pattern || "*", signal))
      .filter((n) => re.test(n) && (!subsystem || subsystemOf(n).toUpperCase() === subsystem));
    return {
      total: names.length,
      offset,
      devices: names.slice(offset, offset + limit).map((device) => ({
        device,
        exists: true,
        description: "archived PV",
        units: "",
        writable: false,
        type: "number",
        subsystem: subsystemOf(device),
      })),
    };
  }

  async logs(q: LogQuery, signal?: AbortSignal): Promise<LogEntry[]> {
    if (q.source === "elog") {
      if (!this.#svc.olog) throw new Error("no e-log configured: set [epics] olog_url");
      return await ologEntries(this.#svc.olog, q, signal);
    }
    if (!this.#svc.alarm) throw new Error("no alarm log configured: set [epics] alarm_logger_url");
    return await alarmEntries(this.#svc.alarm, q, signal);
  }

  async archive(q: ArchiveQuery, signal?: AbortSignal): Promise<Series[]> {
    if (!this.#svc.archiver) throw new Error("no archiver configured: set [epics] archiver_url");
    return await archiverData(this.#svc.archiver, q, signal);
  }

  close(): Promise<void> {
    this.pvws?.close();
    return Promise.resolve();
  }

  #now(): number {
    return (this.#timers ?? realTimers).now();
  }

  #needPvws(): PvwsClient {
    if (!this.pvws) throw new Error("no PV gateway configured: set [epics] pvws_url");
    return this.pvws;
  }

  /** Each name's merged state or why there is none; one subscribe message for the batch. */
  async #states(
    names: string[],
    signal?: AbortSignal,
    metadata = false,
  ): Promise<Map<string, PvState | Error>> {
    signal?.throwIfAborted();
    const out = new Map<string, PvState | Error>();
    if (!this.pvws) {
      const e = new Error("no PV gateway configured: set [epics] pvws_url");
      for (const n of names) out.set(n, e);
      return out;
    }
    const unique = [...new Set(names)];
    // One deadline for the whole read: a probe of the HTTP path may use half of it.
    const deadline = this.#now() + this.#o.readTimeoutMs;
    if (!metadata && this.#pvget !== "off" && await this.#pvgetAvailable(unique[0], signal)) {
      await Promise.all(unique.map(async (n) => out.set(n, await this.#pvgetOne(n, signal))));
      return out;
    }
    const pvs = unique.map((n) => this.#prefix + n);
    let got: Map<string, PvState | Error>;
    try {
      // What a probe left of the read timeout (the whole of it, in messages, when no probe ran).
      const left = Math.round(deadline - this.#now());
      const budget = left >= this.#o.readTimeoutMs - 2 ? this.#o.readTimeoutMs : Math.max(1, left);
      got = await this.pvws.acquire(pvs, budget, signal, this.#o.readTimeoutMs);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      for (const n of unique) out.set(n, asError(e));
      return out;
    }
    this.pvws.release(pvs);
    for (const n of unique) out.set(n, got.get(this.#prefix + n) ?? new Error("no value"));
    return out;
  }

  async #pvgetAvailable(first: string | undefined, signal?: AbortSignal): Promise<boolean> {
    if (this.#pvget === "on") return true;
    if (first === undefined || !this.#svc.pvget) return false;
    if (this.#now() < this.#pvgetProbeAfter) return false;
    const probe = timeoutSignal(Math.max(1, this.#o.readTimeoutMs / 2), this.#timers);
    try {
      await httpText(this.#svc.pvget, `/pvget?name=${encodeURIComponent(this.#prefix + first)}`, {
        signal: signal ? AbortSignal.any([signal, probe]) : probe,
      });
      this.#pvget = "on";
      return true;
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      // The ORNL gateway has no pvget: use the socket from now on. A gateway that does
      // not answer is not asked again for a minute, so each read is not slowed by it.
      if (e instanceof HttpStatusError) this.#pvget = "off";
      else this.#pvgetProbeAfter = this.#now() + 60_000;
      return false;
    }
  }

  async #pvgetOne(name: string, signal?: AbortSignal): Promise<PvState | Error> {
    try {
      const svc = this.#svc.pvget as HttpService;
      const { text, status } = await httpText(
        svc,
        `/pvget?name=${encodeURIComponent(this.#prefix + name)}`,
        { signal },
      );
      if (!text.trim()) {
        return new Error(`no value within the gateway's read timeout: the PV did not connect`);
      }
      return shaped(
        svc,
        PvFieldsSchema,
        jsonReply(svc, text, status, true),
        "a PV update (value, severity, time stamp)",
      );
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      return asError(e);
    }
  }
}

function failed(device: string, e: Error | undefined): Reading {
  return {
    device,
    value: null,
    units: "",
    timestamp: new Date().toISOString(),
    severity: "INVALID",
    status: "DISCONNECTED",
    ok: false,
    error: e?.message ?? "no value",
  };
}

/** Opens the EPICS backend; nothing connects until the first call. */
export function createEpics(opts: EpicsOptions): Epics {
  return new Epics(opts);
}
