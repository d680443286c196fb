/**
 * TANGO through its REST API (spec §h). Device names in the agent are
 * `domain/family/member/attribute`; a bare `domain/family/member` reads the
 * device's State (value) and Status (status text). Reads of many attributes
 * go one request per device, all devices at once; attribute info (units,
 * limits, writability) is fetched once per device and cached.
 *
 * @example
 * ```ts
 * import { createTango } from "./mod.ts";
 * const cs = createTango({ restUrl: "http://rest:10001/tango/rest", tangoHost: "tango-db:10000" });
 * const [v] = await cs.read(["sys/tg_test/1/double_scalar"]);
 * await cs.close();
 * ```
 *
 * @module
 */
import type { ArchiveQuery, ControlSystem, DeviceQuery, LogQuery } from "../adapter.ts";
import type { DeviceInfo, DevicePage, LogEntry, Reading, Series, Value } from "../adapter.ts";
import { wildcard } from "../adapter.ts";
import { trimBase } from "../http.ts";
import { type AttrInfo, tangoErrorText, TangoRest } from "./rest.ts";
import { errorMessage } from "../../util/errors.ts";
import { failed, matchByName, readbackOf, toInfo, toReading } from "./convert.ts";
import { type DeviceNaming, namingFor, requireCanonical } from "../device_names.ts";
export { matchByName } from "./convert.ts";

export interface TangoOptions {
  /** REST entry point, e.g. `http://rest:10001/tango/rest`. */
  restUrl: string;
  /** `v11` (default), `v10` or `rc4`. */
  apiVersion?: string;
  /** `host:port` of the Tango database (or of a device server without one). */
  tangoHost?: string;
  authorization?: string;
  timeoutMs?: number;
  /** Largest response body read from the REST server ([tango] max_bytes). */
  maxBytes?: number;
}

/** Splits `dom/fam/mem[/attr]`; undefined for anything else. */
export function splitName(name: string): { device: string; attr?: string } | undefined {
  const parts = name.split("/");
  if (parts.length < 3 || parts.length > 4 || parts.some((p) => !p)) return undefined;
  return { device: parts.slice(0, 3).join("/"), attr: parts[3] };
}

/** The TANGO backend. */
export class Tango implements ControlSystem {
  readonly kind = "tango";
  readonly #rest: TangoRest;
  readonly #info = new Map<string, Promise<Map<string, AttrInfo>>>();
  readonly #naming: DeviceNaming;

  constructor(opts: TangoOptions) {
    this.#naming = namingFor("tango", { tangoHost: opts.tangoHost ?? "localhost:10000" });
    this.#rest = new TangoRest(
      {
        label: "TANGO REST",
        base: trimBase(opts.restUrl),
        timeoutMs: opts.timeoutMs ?? 10_000,
        authorization: opts.authorization,
        maxBytes: opts.maxBytes,
        maxBytesKey: "[tango] max_bytes",
      },
      opts.apiVersion ?? "v11",
      opts.tangoHost ?? "localhost:10000",
    );
  }

  async read(names: string[], signal?: AbortSignal): Promise<Reading[]> {
    signal?.throwIfAborted();
    const byDevice = new Map<string, string[]>();
    const out = new Map<string, Reading>();
    for (const name of names) {
      const n = this.#split(name);
      if (typeof n === "string") out.set(name, failed(name, n));
      else if (!n.attr) byDevice.set(n.device, byDevice.get(n.device) ?? []);
      else byDevice.set(n.device, [...(byDevice.get(n.device) ?? []), n.attr]);
    }
    await Promise.all([...byDevice].map(async ([device, attrs]) => {
      try {
        if (names.includes(device)) out.set(device, await this.#stateReading(device, signal));
        const unique = [...new Set(attrs)];
        if (!unique.length) return;
        const [values, info] = await Promise.all([
          this.#rest.values(device, unique, signal),
          this.#infos(device, signal).catch(() => new Map<string, AttrInfo>()),
        ]);
        const byName = matchByName(unique, values);
        for (const attr of unique) {
          const name = `${device}/${attr}`;
          out.set(name, toReading(name, byName.get(attr), info.get(attr.toLowerCase())));
        }
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        for (const attr of attrs) {
          out.set(`${device}/${attr}`, failed(`${device}/${attr}`, errorMessage(e)));
        }
        if (names.includes(device)) out.set(device, failed(device, errorMessage(e)));
      }
    }));
    return names.map((n) => out.get(n) ?? failed(n, "no value"));
  }

  /**
   * Writes and reads back in one request; refuses a name that is not
   * canonical, and read-only attributes, before sending.
   */
  async write(name: string, value: Value, signal?: AbortSignal): Promise<void> {
    requireCanonical(this.#naming, name);
    const n = splitName(name);
    if (!n?.attr) {
      throw new Error(`"${name}" is not a TANGO attribute: use domain/family/member/attribute`);
    }
    if (Array.isArray(value)) {
      throw new Error(`${name}: writing spectra is not supported; nothing written`);
    }
    const info = (await this.#infos(n.device, signal)).get(n.attr.toLowerCase());
    if (!info) throw new Error(`${name}: no such attribute on ${n.device}; nothing written`);
    if (info.writable === "READ") {
      throw new Error(`${name} is read-only (writable READ); nothing written`);
    }
    const back = await this.#rest.write(n.device, n.attr, String(value), signal);
    const error = back && tangoErrorText(back);
    if (error) throw new Error(`write to ${name} failed: ${error}`);
  }

  async describe(names: string[], signal?: AbortSignal): Promise<DeviceInfo[]> {
    return await Promise.all(names.map(async (name): Promise<DeviceInfo> => {
      const n = this.#split(name);
      const missing = (why: string): DeviceInfo => ({
        device: name,
        exists: false,
        description: why,
        units: "",
        writable: false,
        type: "number",
        subsystem: name.split("/")[0] ?? name,
      });
      if (typeof n === "string") return missing(n);
      try {
        if (!n.attr) {
          const s = await this.#rest.state(n.device, signal);
          return {
            ...missing(""),
            exists: true,
            type: "enum",
            description: `${s.state}: ${s.status}`,
          };
        }
        const infos = await this.#infos(n.device, signal);
        const info = infos.get(n.attr.toLowerCase());
        return info
          ? { ...toInfo(name, info), ...readbackOf(name, n.device, info, infos) }
          : missing(`no attribute "${n.attr}" on ${n.device}`);
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        return missing(errorMessage(e));
      }
    }));
  }

  /** Devices by the wildcard's first three segments, then their attributes, paged here. */
  async search(q: DeviceQuery, signal?: AbortSignal): Promise<DevicePage> {
    const pattern = q.pattern.trim() || "*";
    const parts = pattern.split("/");
    const deviceWildcard = parts.length >= 3 ? parts.slice(0, 3).join("/") : "*/*/*";
    const list = await this.#rest.devices(deviceWildcard, signal);
    const devices = list.map((d) => d.name).filter((d) =>
      !q.subsystem || d.split("/")[0]?.toLowerCase() === q.subsystem.toLowerCase()
    ).sort();
    const re = wildcard(
      pattern.includes("/") ? pattern : `*${pattern.replace(/^\*|\*$/g, "")}*`,
    );
    const matches: DeviceInfo[] = [];
    // Attribute lists are fetched eight devices at a time, in order: a facility's
    // database lists thousands of devices, one request after another would take minutes.
    const infosOf = await mapLimited(devices, 8, (device) => this.#infos(device, signal));
    for (const [i, device] of devices.entries()) {
      const infos = infosOf[i];
      if (!infos) continue;
      for (const info of [...infos.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const d = {
          ...toInfo(`${device}/${info.name}`, info),
          ...readbackOf(`${device}/${info.name}`, device, info, infos),
        };
        if (re.test(d.device) && (q.writable === undefined || d.writable === q.writable)) {
          matches.push(d);
        }
      }
    }
    const offset = Math.max(0, q.offset ?? 0);
    return {
      total: matches.length,
      offset,
      devices: matches.slice(offset, offset + (q.limit ?? 50)),
    };
  }

  logs(q: LogQuery): Promise<LogEntry[]> {
    return Promise.reject(
      new Error(
        `the TANGO adapter has no ${
          q.source === "elog" ? "e-log" : "alarm log"
        }: the TANGO REST API serves live values only`,
      ),
    );
  }

  archive(_q: ArchiveQuery): Promise<Series[]> {
    return Promise.reject(
      new Error("the TANGO adapter has no archive: the TANGO REST API serves live values only"),
    );
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * A name's device and attribute, as given (a `tango://` prefix naming this
   * host dropped), or why the name is refused: nothing is asked for a name
   * the server would decode into another.
   */
  #split(name: string): { device: string; attr?: string } | string {
    const c = this.#naming.canonical(name);
    if (!c.ok) return c.error;
    return splitName(name.replace(/^tango:\/\/[^/]*\//i, "")) ??
      `"${name}" is not a TANGO name: use domain/family/member/attribute`;
  }

  #infos(device: string, signal?: AbortSignal): Promise<Map<string, AttrInfo>> {
    let p = this.#info.get(device);
    if (!p) {
      p = this.#rest.attributes(device, signal).then((attrs) =>
        new Map(attrs.map((a) => {
          const info: AttrInfo = { ...(a.info ?? {}), name: a.info?.name ?? String(a.name) };
          return [info.name.toLowerCase(), info];
        }))
      );
      p.catch(() => this.#info.delete(device));
      this.#info.set(device, p);
    }
    return p;
  }

  async #stateReading(device: string, signal?: AbortSignal): Promise<Reading> {
    const s = await this.#rest.state(device, signal);
    const state = s.state;
    return {
      device,
      value: state,
      units: "",
      timestamp: new Date().toISOString(),
      severity: state === "FAULT" ? "MAJOR" : state === "ALARM" ? "MINOR" : "NONE",
      status: (s.status ?? state).trim(),
      ok: true,
    };
  }
}

/** Opens the TANGO backend; nothing connects until the first call. */
export function createTango(opts: TangoOptions): Tango {
  return new Tango(opts);
}

/** `fn` over `items` with at most `limit` calls in flight; results in input order. */
async function mapLimited<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
