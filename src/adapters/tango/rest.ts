/**
 * The TANGO REST API (spec §h) as far as the adapter uses it: URLs for a
 * configured version (`rc4`, `v10`, `v11`) and Tango host, Basic
 * credentials, and error bodies turned into one line — `errors[]` with
 * `description` (the spec) or `desc` (what servers serialise from DevError).
 * Every segment of a device name is percent-encoded in the path, so the
 * server decodes exactly the name the limits saw (`../device_names.ts`).
 *
 * @module
 */
import type { z } from "zod";
import { httpRead, type HttpService, HttpStatusError, httpText, query } from "../http.ts";
import { jsonListPage, jsonReply, pageBody, shaped } from "../reply.ts";
import {
  AttributesSchema,
  type AttrInfoSchema,
  type AttrValue,
  CollectionSchema,
  DevicesSchema,
  StateSchema,
  ValuesSchema,
  WriteReplySchema,
} from "./shapes.ts";
import { tangoPath } from "../device_names.ts";

/** A TANGO attribute's static description (AttributeInfoEx), the fields used. */
export type AttrInfo = Partial<z.infer<typeof AttrInfoSchema>> & { name: string };

export type { AttrValue };

/** The text of a TANGO error body or element: "reason: description". */
export function tangoErrorText(body: unknown): string | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const b = body as Record<string, unknown>;
  const first = Array.isArray(b.errors) ? (b.errors[0] as Record<string, unknown> | undefined) : b;
  if (!first) return undefined;
  const description = first.description ?? first.desc;
  if (description === undefined && first.reason === undefined) return undefined;
  return [first.reason, description].filter((x) => x !== undefined && x !== "").join(": ");
}

/** One page of a TANGO REST collection. */
export interface CollectionPage {
  /** 200 (the whole collection), 206 (a page) or 416 (a range past the end). */
  status: number;
  items: unknown[];
  /** The body held more than the elements asked for (the rest was not read). */
  more: boolean;
  /** The collection's size, from Content-Range or X-size, when the server sent it. */
  total: number | undefined;
}

/** A TANGO error reply as one line: the TANGO reason and description, or the HTTP status. */
function explain(e: unknown): unknown {
  if (!(e instanceof HttpStatusError)) return e;
  let detail: string | undefined;
  try {
    detail = tangoErrorText(JSON.parse(e.body));
  } catch { /* not JSON */ }
  if (e.status === 401) {
    return new Error(
      "TANGO REST refused the credentials (HTTP 401): set the variables named by [tango] username_env and password_env",
    );
  }
  return new Error(detail ? `${detail} (HTTP ${e.status})` : e.message);
}

/** Paths under one Tango host of one REST server. */
export class TangoRest {
  readonly #svc: HttpService;
  readonly #hostPath: string;

  constructor(svc: HttpService, version: string, tangoHost: string) {
    const [host, port] = tangoHost.split(":");
    this.#hostPath = `/${version}/hosts/${host}${port && port !== "10000" ? `;port=${port}` : ""}`;
    this.#svc = { ...svc, base: `${svc.base}` };
  }

  /** GET or PUT under the host; TANGO errors become one-line Errors. */
  async call(path: string, method = "GET", signal?: AbortSignal): Promise<unknown> {
    let text: string, status: number;
    try {
      ({ text, status } = await httpText(this.#svc, `${this.#hostPath}${path}`, {
        method,
        signal,
      }));
    } catch (e) {
      throw explain(e);
    }
    return text.trim() ? jsonReply(this.#svc, text, status) : undefined;
  }

  /**
   * One page of a collection (spec §h.1 `?range=a-b`, end exclusive, as the
   * reference server's PartitionProvider): at most `maxItems` elements, within
   * `[tango] max_bytes`, and the collection's size from `Content-Range: items
   * a-b/N` (206) or `X-size` (200). HTTP 416 (a range past the end) comes
   * back as `status: 416` with no items; other errors as for {@link call}.
   */
  async collection(path: string, maxItems: number, signal?: AbortSignal): Promise<CollectionPage> {
    try {
      const { status, body } = await httpRead(
        this.#svc,
        `${this.#hostPath}${path}`,
        { signal },
        async (res, url) => {
          const range = /\/\s*(\d+)\s*$/.exec(res.headers.get("content-range") ?? "")?.[1];
          const size = range ?? res.headers.get("x-size") ?? undefined;
          const page = await jsonListPage(this.#svc, maxItems)(res, url);
          return { page, total: size === undefined ? undefined : Number(size) };
        },
      );
      const items = shaped(
        this.#svc,
        CollectionSchema,
        pageBody(body.page),
        "a list (a collection page)",
      );
      return { status, items, more: body.page.more, total: body.total };
    } catch (e) {
      if (e instanceof HttpStatusError && e.status === 416) {
        return { status: 416, items: [], more: false, total: undefined };
      }
      throw explain(e);
    }
  }

  async devices(wildcard: string, signal?: AbortSignal): Promise<z.infer<typeof DevicesSchema>> {
    const body = await this.call(`/devices${query({ wildcard })}`, "GET", signal);
    return shaped(this.#svc, DevicesSchema, body ?? [], "a list of devices with names");
  }

  async attributes(
    device: string,
    signal?: AbortSignal,
  ): Promise<z.infer<typeof AttributesSchema>> {
    const body = await this.call(`/devices/${tangoPath(device)}/attributes`, "GET", signal);
    return shaped(this.#svc, AttributesSchema, body ?? [], `a list of ${device}'s attributes`);
  }

  async values(device: string, attrs: string[], signal?: AbortSignal): Promise<AttrValue[]> {
    const body = await this.call(
      `/devices/${tangoPath(device)}/attributes/value${query({ attr: attrs })}`,
      "GET",
      signal,
    );
    // A whole-request failure may come as a TANGO error body with status 200.
    const error = !Array.isArray(body) ? tangoErrorText(body) : undefined;
    if (error) throw new Error(error);
    return shaped(this.#svc, ValuesSchema, body, `a list of ${device}'s attribute values`);
  }

  async write(
    device: string,
    attr: string,
    v: string,
    signal?: AbortSignal,
  ): Promise<AttrValue | undefined> {
    const body = await this.call(
      `/devices/${tangoPath(device)}/attributes/${encodeURIComponent(attr)}/value${query({ v })}`,
      "PUT",
      signal,
    );
    const back = shaped(this.#svc, WriteReplySchema, body, `the value of ${device}/${attr}`);
    return Array.isArray(back) ? back[0] : back;
  }

  async state(device: string, signal?: AbortSignal): Promise<z.infer<typeof StateSchema>> {
    const body = await this.call(`/devices/${tangoPath(device)}/state`, "GET", signal);
    return shaped(this.#svc, StateSchema, body, `the state of ${device}`);
  }
}
