/**
 * The TANGO REST API (spec §h) as far as the adapter uses it: URLs for a
 * configured version (`rc4`, `v10`, `v11`) and Tango host, Basic
 * credentials, and error bodies turned into one line — `errors[]` with
 * `description` (the spec) or `desc` (what servers serialise from DevError).
 *
 * @module
 */
import type { z } from "zod";
import { type HttpService, HttpStatusError, httpText, query } from "../http.ts";
import { jsonReply, shaped } from "../reply.ts";
import {
  AttributesSchema,
  type AttrInfoSchema,
  type AttrValue,
  DevicesSchema,
  StateSchema,
  ValuesSchema,
  WriteReplySchema,
} from "./shapes.ts";

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
      if (!(e instanceof HttpStatusError)) throw e;
      let detail: string | undefined;
      try {
        detail = tangoErrorText(JSON.parse(e.body));
      } catch { /* not JSON */ }
      if (e.status === 401) {
        throw new Error(
          "TANGO REST refused the credentials (HTTP 401): set the variables named by [tango] username_env and password_env",
        );
      }
      throw new Error(detail ? `${detail} (HTTP ${e.status})` : e.message);
    }
    return text.trim() ? jsonReply(this.#svc, text, status) : undefined;
  }

  async devices(wildcard: string, signal?: AbortSignal): Promise<z.infer<typeof DevicesSchema>> {
    const body = await this.call(`/devices${query({ wildcard })}`, "GET", signal);
    return shaped(this.#svc, DevicesSchema, body ?? [], "a list of devices with names");
  }

  async attributes(
    device: string,
    signal?: AbortSignal,
  ): Promise<z.infer<typeof AttributesSchema>> {
    const body = await this.call(`/devices/${device}/attributes`, "GET", signal);
    return shaped(this.#svc, AttributesSchema, body ?? [], `a list of ${device}'s attributes`);
  }

  async values(device: string, attrs: string[], signal?: AbortSignal): Promise<AttrValue[]> {
    const body = await this.call(
      `/devices/${device}/attributes/value${query({ attr: attrs })}`,
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
      `/devices/${device}/attributes/${encodeURIComponent(attr)}/value${query({ v })}`,
      "PUT",
      signal,
    );
    const back = shaped(this.#svc, WriteReplySchema, body, `the value of ${device}/${attr}`);
    return Array.isArray(back) ? back[0] : back;
  }

  async state(device: string, signal?: AbortSignal): Promise<z.infer<typeof StateSchema>> {
    const body = await this.call(`/devices/${device}/state`, "GET", signal);
    return shaped(this.#svc, StateSchema, body, `the state of ${device}`);
  }
}
