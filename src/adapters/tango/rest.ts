/**
 * The TANGO REST API (spec §h) as far as the adapter uses it: URLs for a
 * configured version (`rc4`, `v10`, `v11`) and Tango host, Basic
 * credentials, and error bodies turned into one line — `errors[]` with
 * `description` (the spec) or `desc` (what servers serialise from DevError).
 *
 * @module
 */
import { type HttpService, HttpStatusError, httpText, query } from "../http.ts";

/** A TANGO attribute's static description (AttributeInfoEx). */
export interface AttrInfo {
  name: string;
  writable?: string;
  data_format?: string;
  data_type?: string;
  label?: string;
  unit?: string;
  description?: string;
  min_value?: string;
  max_value?: string;
  min_alarm?: string;
  max_alarm?: string;
  enum_label?: string[];
}

/** One element of a value read: a value object, or an error in its place. */
export interface AttrValue {
  name?: string;
  value?: unknown;
  quality?: string;
  timestamp?: number;
  errors?: unknown[];
  reason?: string;
  desc?: string;
  description?: string;
}

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
    let text: string;
    try {
      ({ text } = await httpText(this.#svc, `${this.#hostPath}${path}`, { method, signal }));
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
    return text.trim() ? JSON.parse(text) : undefined;
  }

  devices(wildcard: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(`/devices${query({ wildcard })}`, "GET", signal);
  }

  attributes(device: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(`/devices/${device}/attributes`, "GET", signal);
  }

  values(device: string, attrs: string[], signal?: AbortSignal): Promise<unknown> {
    return this.call(`/devices/${device}/attributes/value${query({ attr: attrs })}`, "GET", signal);
  }

  write(device: string, attr: string, v: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(
      `/devices/${device}/attributes/${encodeURIComponent(attr)}/value${query({ v })}`,
      "PUT",
      signal,
    );
  }

  state(device: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(`/devices/${device}/state`, "GET", signal);
  }
}
