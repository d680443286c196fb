/**
 * The whole fake EPICS facility on loopback: pvws gateway, Archiver
 * Appliance, ChannelFinder, Olog and alarm logger, each on its own port and
 * speaking its wire format (spec §a, §d–§g), with faults and latency on
 * every one. `config()` writes the `[facility]`/`[epics]` TOML that points
 * the agent at them.
 *
 * @module
 */
import {
  alarmMessages,
  archivedValue,
  epicsPvs,
  NOT_ARCHIVED,
  ologEntries,
  recordTypeOf,
} from "./epics_data.ts";
import { FakeHttp, globRe, jsonText } from "./fake_http.ts";
import { FakeOlog } from "./fake_olog.ts";
import { type FakePv, FakePvws } from "./fake_pvws.ts";

export interface FakeEpicsOptions {
  /** Per-message latency of the gateway, in ms. */
  latencyMs?: number;
  /** Offer `GET /pvws/pvget` (pvws-springboot). */
  pvget?: boolean;
  /** "Now" of the logs' story (default: the real now). */
  nowMs?: number;
  /**
   * Changes the facility's data before it is served: PVs (units,
   * descriptions, values), Olog entries and alarm messages — e.g. to plant
   * hostile text in a service's strings.
   */
  edit?: (data: FacilityData) => void;
  /** ChannelFinder's Elasticsearch window (spec §e.2): `~from` + `~size` past it is a 400. */
  maxResultWindow?: number;
  /** ChannelFinder honours the `~search_after` cursor (default true; older servers ignore it). */
  searchAfter?: boolean;
  /** ChannelFinder serves `/scroll` and `/scroll/<id>` (default true). */
  scroll?: boolean;
}

/** What the fake facility serves, for {@link FakeEpicsOptions.edit}. */
export interface FacilityData {
  pvs: Record<string, FakePv>;
  elog: Record<string, unknown>[];
  alarms: Record<string, unknown>[];
}

export class FakeEpics implements AsyncDisposable {
  readonly pvws: FakePvws;
  readonly archiver: FakeHttp;
  readonly channelfinder: FakeHttp;
  readonly olog: FakeHttp;
  /** Olog's state: its entries and every write it received. */
  readonly ologService: FakeOlog;
  readonly alarm: FakeHttp;
  readonly nowMs: number;

  constructor(opts: FakeEpicsOptions = {}) {
    this.nowMs = opts.nowMs ?? Date.now();
    const data = {
      pvs: epicsPvs(),
      elog: ologEntries(this.nowMs),
      alarms: alarmMessages(this.nowMs),
    };
    opts.edit?.(data);
    const { pvs, elog, alarms } = data;
    this.pvws = new FakePvws({ pvs, latencyMs: opts.latencyMs, pvget: opts.pvget });
    this.archiver = new FakeHttp((url) => archiverRoute(url, pvs));
    this.channelfinder = new FakeHttp((url) =>
      channelFinderRoute(url, pvs, {
        maxResultWindow: opts.maxResultWindow ?? 10_000,
        searchAfter: opts.searchAfter ?? true,
        scroll: opts.scroll ?? true,
      })
    );
    this.ologService = new FakeOlog(elog);
    this.olog = new FakeHttp((url, req) => this.ologService.handle(url, req));
    this.alarm = new FakeHttp((url) => alarmRoute(url, alarms));
  }

  /** The `[epics]` URLs of the running fakes. */
  get urls() {
    return {
      pvws_url: this.pvws.url,
      archiver_url: `${this.archiver.origin}/retrieval`,
      channelfinder_url: `${this.channelfinder.origin}/ChannelFinder/resources`,
      olog_url: `${this.olog.origin}/Olog`,
      alarm_logger_url: this.alarm.origin,
    };
  }

  /** A config file's text selecting the EPICS adapter on these fakes. */
  config(extra: Record<string, string | number> = {}): string {
    const lines = Object.entries({ ...this.urls, ...extra }).map(([k, v]) =>
      `${k} = ${JSON.stringify(v)}`
    );
    return `[facility]\nadapter = "epics"\n\n[epics]\n${lines.join("\n")}\n`;
  }

  async close(): Promise<void> {
    await Promise.all([
      this.pvws.close(),
      this.archiver.close(),
      this.channelfinder.close(),
      this.olog.close(),
      this.alarm.close(),
    ]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

export function startFakeEpics(opts: FakeEpicsOptions = {}): FakeEpics {
  return new FakeEpics(opts);
}

// ---- Archiver Appliance (spec §d) --------------------------------------------

function archiverRoute(url: URL, pvs: Record<string, FakePv>): Response {
  if (url.pathname === "/retrieval/bpl/getMatchingPVs") {
    const glob = url.searchParams.get("pv");
    if (!glob) return new Response("Not Found", { status: 404 });
    const limit = Number(url.searchParams.get("limit") ?? 500);
    const names = Object.keys(pvs).filter((n) => !NOT_ARCHIVED.has(n) && globRe(glob).test(n))
      .sort();
    return Response.json(limit < 0 ? names : names.slice(0, limit));
  }
  if (url.pathname !== "/retrieval/data/getData.json") {
    return new Response("Not Found", { status: 404 });
  }
  const raw = (url.searchParams.get("pv") ?? "").replace(/\.VAL$/, "");
  const m = /^mean_(\d+)\((.+)\)$/.exec(raw);
  const name = m ? (m[2] as string) : raw;
  const pv = pvs[name];
  if (!pv || NOT_ARCHIVED.has(name)) {
    return new Response(`Unable to find typeinfo for pv ${name}`, { status: 404 });
  }
  const fromMs = Date.parse(url.searchParams.get("from") ?? "");
  const toMs = Date.parse(url.searchParams.get("to") ?? "");
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) {
    return new Response("Cannot parse time", { status: 400 });
  }
  // String and enum PVs are archived on change; means of them are refused, as some
  // appliances do: the client must ask for raw data.
  const onChange = typeof pv.value === "string" || pv.vtype === "VEnum";
  if (m && onChange) {
    return new Response("Cannot compute mean of a string or enum PV", { status: 400 });
  }
  const step = m ? Number(m[1]) : 1;
  const events: string[] = [];
  for (const t of archivedTimes(onChange ? pv : undefined, fromMs, toMs, step)) {
    const v = archivedValue(name, pv, t);
    // The Java serializer writes non-finite doubles as bare tokens: invalid JSON, on purpose.
    const val = name === "SR:VAC:GAUGE:01" && t % 97 === 0
      ? "NaN"
      : name === "SR:VAC:GAUGE:01" && t % 89 === 0
      ? "Infinity"
      : JSON.stringify(v);
    const severity = name === "SR:VAC:GAUGE:01" ? 2 : 0;
    events.push(`{"secs":${t},"val":${val},"nanos":0,"severity":${severity},"status":0}`);
  }
  const meta: Record<string, string> = { name, PREC: String(pv.precision ?? 0) };
  if (pv.units) meta.EGU = pv.units;
  pv.labels?.forEach((l, i) => (meta[`ENUM_${i}`] = l));
  return jsonText(`[{"meta":${JSON.stringify(meta)},"data":[${events.join(",")}]}]`);
}

/** The string PVs' one sample: set long before any window asked for (2020-01-01). */
const STRING_SET_S = 1_577_836_800;

/**
 * Seconds of the samples the appliance returns for [from, to): as it does,
 * the last one from before `from` first. Periodic samples every `step` s;
 * an on-change PV's only when it changed (strings never; enums each hour).
 */
function archivedTimes(onChange: FakePv | undefined, fromMs: number, toMs: number, step: number) {
  const times: number[] = [];
  if (onChange && typeof onChange.value === "string") return [STRING_SET_S];
  const every = onChange ? 3600 : step;
  const first = Math.ceil(fromMs / 1000 / every) * every;
  if (first * 1000 > fromMs) times.push(first - every);
  for (let t = first; t * 1000 < toMs; t += every) times.push(t);
  return times;
}

// ---- ChannelFinder (spec §e) --------------------------------------------------

function channelFinderRoute(
  url: URL,
  pvs: Record<string, FakePv>,
  opts: ChannelFinderOptions,
): Response {
  const channels = Object.entries(pvs).map(([name, pv]): CfChannel => ({
    name,
    owner: "recceiver",
    properties: [
      { name: "recordType", value: recordTypeOf(pv), owner: "recceiver", channels: [] },
      { name: "recordDesc", value: pv.description ?? "", owner: "recceiver", channels: [] },
      { name: "iocName", value: name.split(":")[1] ?? "", owner: "recceiver", channels: [] },
      { name: "pvStatus", value: "Active", owner: "recceiver", channels: [] },
    ],
    tags: NOT_ARCHIVED.has(name) ? [] : [{ name: "archived", owner: "cf", channels: [] }],
  }));
  return channelsRoute(url, channels, opts);
}

/** A ChannelFinder channel as the service sends it (spec §e.2). */
export interface CfChannel {
  name: string;
  owner: string;
  properties: { name: string; value: string; owner: string; channels: never[] }[];
  tags: { name: string; owner: string; channels: never[] }[];
}

/** How a fake ChannelFinder pages. */
export interface ChannelFinderOptions {
  /** Elasticsearch's window: `~from` + `~size` past it is a 400. */
  maxResultWindow: number;
  /** `~search_after` is honoured. */
  searchAfter: boolean;
  /** `/scroll` is served. */
  scroll: boolean;
}

/**
 * ChannelFinder's channel resources over any list of channels: `~name`,
 * `~tag` and property globs (negation with `!`), `~size`, `~from` within the
 * window, `~search_after`, `/scroll`, `/count`.
 */
export function channelsRoute(
  url: URL,
  channels: CfChannel[],
  opts: ChannelFinderOptions,
): Response {
  const base = "/ChannelFinder/resources/channels";
  // GET /scroll[/<id>]: the same query, continued after the hit whose id (the name) is given.
  const scroll = /^\/ChannelFinder\/resources\/scroll(?:\/([^/]+))?$/.exec(url.pathname);
  if (url.pathname !== base && url.pathname !== `${base}/count` && !(scroll && opts.scroll)) {
    return new Response("Not Found", { status: 404 });
  }
  let from = 0, size = 10_000;
  let after: string | undefined;
  const tests: ((c: CfChannel) => boolean)[] = [];
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key).flatMap((v) => v.split(/[|,;]/));
    const res = values.map(globRe);
    const negate = key.endsWith("!");
    const k = negate ? key.slice(0, -1) : key;
    if (k === "~from") from = Number(values[0]);
    else if (k === "~size") size = Number(values[0]);
    else if (k === "~search_after") {
      after = opts.searchAfter ? url.searchParams.get(key) ?? "" : undefined;
    } else if (k === "~name") tests.push((c) => res.some((r) => r.test(c.name)) !== negate);
    else if (k === "~tag") {
      tests.push((c) => c.tags.some((t) => res.some((r) => r.test(t.name))) !== negate);
    } else if (!k.startsWith("~")) {
      tests.push((c) => {
        const p = c.properties.find((p) => p.name === k);
        return (p !== undefined && res.some((r) => r.test(p.value))) !== negate;
      });
    }
  }
  const hits = channels.filter((c) => tests.every((t) => t(c))).sort((a, b) =>
    a.name < b.name ? -1 : 1
  );
  if (url.pathname.endsWith("/count")) return new Response(String(hits.length));
  if (scroll) {
    const id = scroll[1] === undefined ? undefined : decodeURIComponent(scroll[1]);
    const page = (id === undefined ? hits : hits.filter((c) => c.name > id)).slice(0, size);
    return Response.json({ id: page.at(-1)?.name ?? null, channels: page });
  }
  if (from + size > opts.maxResultWindow) {
    // What Elasticsearch answers past its window, relayed by ChannelFinder.
    return Response.json({
      error: "Bad Request",
      message: `Result window is too large, from + size must be less than or equal to: ` +
        `[${opts.maxResultWindow}] but was [${from + size}]. See the scroll api.`,
    }, { status: 400 });
  }
  // The sort is always by name: the cursor is the last name of the previous page.
  const rest = after === undefined ? hits : hits.filter((c) => c.name > after);
  return Response.json(rest.slice(from, from + size));
}

// ---- Olog (spec §f) -----------------------------------------------------------

/** `2021-01-20 12:00:00.123` in the given zone (UTC only here). */
function serviceTimeMs(text: string | null): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(`${text.replace(" ", "T")}Z`);
  return Number.isFinite(ms) ? ms : undefined;
}

// ---- Alarm logger (spec §g) ---------------------------------------------------

function alarmRoute(url: URL, messages: Record<string, unknown>[]): Response {
  if (url.pathname === "/") {
    return Response.json({
      name: "Alarm logging Service",
      version: "4.7.4-SNAPSHOT",
      elastic: { status: "Connected" },
    });
  }
  if (url.pathname !== "/search/alarm") return new Response("Not Found", { status: 404 });
  const p = url.searchParams;
  const start = serviceTimeMs(p.get("start")) ?? 0;
  const end = serviceTimeMs(p.get("end")) ?? Infinity;
  const pv = p.get("pv");
  const size = Number(p.get("size") ?? 1000);
  const timeOf = (m: Record<string, unknown>) => {
    const s = String(m.message_time);
    return Date.parse(s.endsWith("Z") ? s : `${s.replace(" ", "T")}Z`);
  };
  const hits = messages.filter((m) => {
    const t = timeOf(m);
    return t >= start && t <= end && (!pv || globRe(`*${pv}*`).test(String(m.config)));
  }).sort((a, b) => timeOf(b) - timeOf(a));
  return Response.json(hits.slice(0, size));
}
