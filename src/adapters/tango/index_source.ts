/**
 * A TANGO facility's namespace for the device index (`src/index/record.ts`):
 * the REST API's device list (spec §h.3, paged with `?range=a-b` as the
 * reference server's PartitionProvider does: end exclusive, 206 with
 * `Content-Range: items a-b/N`, 416 past the end, and on rc4 a trailing
 * `partial_content` element), then each device's attribute list with its
 * AttributeInfo (label, description, unit, writability, type).
 *
 * Bounded: each page is read within `[tango] max_bytes` and to at most its
 * size; the number of attributes is capped by `[tango] index_max_attributes`
 * (the device count is checked against it before any attribute is read).
 * A device whose attributes cannot be listed (not exported, not answering) is
 * left out and named in {@link TangoIndexSource.skipped}; the walk goes on.
 *
 * @module
 */
import { z } from "zod";
import type { IndexRecord } from "../../index/record.ts";
import type { HttpService } from "../http.ts";
import type { RefreshingSource } from "../epics/index_source.ts";
import { shaped } from "../reply.ts";
import { TangoRest } from "./rest.ts";
import type { AttributesSchema } from "./shapes.ts";
import { errorMessage } from "../../util/errors.ts";

/** Devices per page of the device list. */
export const DEVICE_PAGE_SIZE = 500;
/** Attribute lists read at once. */
const PARALLEL = 8;
/** AttributeInfo's placeholders for "not set". */
const UNSET = new Set(["", "No description", "No unit", "Not specified", "None"]);

const DeviceEntrySchema = z.object({ name: z.string() }).passthrough();

/** Where the REST server is and the bounds of one walk over it. */
export interface TangoIndexOptions {
  svc: HttpService;
  apiVersion: string;
  tangoHost: string;
  /** `[tango] index_max_attributes`. */
  maxAttributes: number;
  /** `[tango] index_refresh_s`, in ms. */
  refreshMs: number;
  /** Devices per page (default {@link DEVICE_PAGE_SIZE}). */
  pageSize?: number;
}

/** Every attribute of every device of one Tango host. */
export class TangoIndexSource implements RefreshingSource {
  readonly id: string;
  readonly refreshMs: number;
  /** Devices left out of the last walk, with why. */
  skipped: { device: string; error: string }[] = [];
  readonly #rest: TangoRest;
  readonly #svc: HttpService;
  readonly #max: number;
  readonly #page: number;

  constructor(o: TangoIndexOptions) {
    this.#svc = o.svc;
    this.#rest = new TangoRest(o.svc, o.apiVersion, o.tangoHost);
    this.id = `tango:${o.svc.base}/${o.apiVersion}/${o.tangoHost}`;
    this.refreshMs = o.refreshMs;
    this.#max = o.maxAttributes;
    this.#page = Math.max(1, o.pageSize ?? DEVICE_PAGE_SIZE);
  }

  async *records(signal?: AbortSignal): AsyncIterable<IndexRecord[]> {
    this.skipped = [];
    const devices = await this.devices(signal);
    let count = 0;
    for (let i = 0; i < devices.length; i += PARALLEL) {
      signal?.throwIfAborted();
      const batch = devices.slice(i, i + PARALLEL);
      const lists = await Promise.all(batch.map(async (device) => {
        try {
          return await this.#rest.attributes(device, signal);
        } catch (e) {
          if (signal?.aborted) throw signal.reason;
          this.skipped.push({ device, error: errorMessage(e) });
          return [];
        }
      }));
      const page = batch.flatMap((device, k) => attributeRecords(device, lists[k] ?? []));
      count += page.length;
      if (count > this.#max) throw this.#tooMany(`more than ${this.#max} attributes`);
      if (page.length > 0) yield page;
    }
  }

  /** The device names, sorted, read page by page. */
  async devices(signal?: AbortSignal): Promise<string[]> {
    const path = (range: string) =>
      `/devices?wildcard=${encodeURIComponent("*/*/*")}&range=${range}`;
    // The reference server refuses a range ending past the collection (416): ask for one
    // device first, to learn the size.
    const first = await this.#rest.collection(path("0-1"), this.#max + 1, signal);
    if (first.status === 416) return [];
    const names: string[] = [];
    const take = (items: unknown[]) => {
      for (const item of items) {
        const d = shaped(this.#svc, DeviceEntrySchema, item, "a device with a name");
        // rc4 appends an element describing the page; it is not a device.
        if (d.name === "partial_content" && "total" in d) continue;
        names.push(d.name);
      }
    };
    if (first.status !== 206) {
      // The server ignored the range and sent the whole list (or it fit in one page).
      if (first.more) throw this.#tooMany(`more than ${this.#max} devices`);
      take(first.items);
      return [...new Set(names)].sort();
    }
    const total = first.total;
    if (total === undefined) {
      throw new Error(
        `${this.#svc.label} at ${this.#svc.base} answered a device page (206) without its size ` +
          `(Content-Range: items a-b/N)`,
      );
    }
    if (total > this.#max) throw this.#tooMany(`${total} devices`);
    for (let from = 0; from < total; from += this.#page) {
      signal?.throwIfAborted();
      const to = Math.min(total, from + this.#page);
      // One more than asked: the rc4 page element.
      const page = await this.#rest.collection(path(`${from}-${to}`), to - from + 1, signal);
      if (page.status === 416) {
        throw new Error(
          `${this.#svc.label} at ${this.#svc.base}: the device list shrank while it was read ` +
            `(range ${from}-${to} of ${total}); read it again`,
        );
      }
      take(page.items);
      if (page.status !== 206) break; // the whole list came back at once
    }
    return [...new Set(names)].sort();
  }

  #tooMany(what: string): Error {
    return new RangeError(
      `${this.#svc.label} at ${this.#svc.base} holds ${what}, more than ` +
        `[tango] index_max_attributes = ${this.#max}; raise it to index them all`,
    );
  }
}

type Attribute = z.infer<typeof AttributesSchema>[number];
type Info = NonNullable<Attribute["info"]>;

/** A device's attributes as the index holds them. */
export function attributeRecords(device: string, attrs: Attribute[]): IndexRecord[] {
  const [domain = "", family = "", member = ""] = device.split("/");
  const out: IndexRecord[] = [];
  for (const a of attrs) {
    const info: Partial<Info> = a.info ?? {};
    const attr = info.name ?? a.name;
    if (attr === undefined) continue;
    const label = set(info.label);
    const description = set(info.description) ?? (label && label !== attr ? label : "");
    const properties: Record<string, string> = { domain, family, member, attribute: attr };
    if (label) properties.label = label;
    for (
      const [key, value] of Object.entries({
        data_type: info.data_type,
        data_format: info.data_format,
        writable: info.writable,
      })
    ) {
      if (value !== undefined) properties[key] = value;
    }
    out.push({
      name: `${device}/${attr}`,
      description,
      units: set(info.unit) ?? "",
      // As the adapter's describe and search (tango/mod.ts): all but READ.
      writable: info.writable !== undefined && info.writable !== "READ",
      properties,
      tags: info.data_format ? [info.data_format.toLowerCase()] : [],
    });
  }
  return out;
}

function set(v: string | undefined): string | undefined {
  return v === undefined || UNSET.has(v.trim()) ? undefined : v.trim();
}
