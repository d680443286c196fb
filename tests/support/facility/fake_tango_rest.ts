/**
 * A fake TANGO REST server (spec §h) that serves values and takes writes,
 * and reads its paths as a real server does: the URL is normalised first
 * (`.` and `..` segments, `%2e` among them, are resolved away), then each
 * segment is percent-decoded, a `;name=value` path parameter is dropped
 * from it (JAX-RS matrix parameters), and devices and attributes are found
 * whatever their letter case (TANGO names are case-insensitive). Every
 * write it takes is recorded with the device and attribute it reached.
 *
 * Devices: `sys/tg_test/1` (TangoTest's `ampli`, `double_scalar`,
 * `string_scalar`, an enum `mode`) and `sr/ps/q1` (`current`, whose read
 * value follows its set value).
 *
 * @module
 */
import { FakeHttp } from "./fake_http.ts";

interface Attr {
  name: string;
  value: number | string;
  writable: "READ" | "WRITE" | "READ_WRITE";
  data_type: string;
  unit?: string;
  min_value?: string;
  max_value?: string;
  enum_label?: string[];
}

function devices(): Map<string, Map<string, Attr>> {
  const of = (attrs: Attr[]) => new Map(attrs.map((a) => [a.name.toLowerCase(), a]));
  return new Map([
    [
      "sys/tg_test/1",
      of([
        { name: "ampli", value: 1, writable: "WRITE", data_type: "DevDouble" },
        { name: "double_scalar", value: 0.5, writable: "READ_WRITE", data_type: "DevDouble" },
        {
          name: "string_scalar",
          value: "Default string",
          writable: "READ_WRITE",
          data_type: "DevString",
        },
        {
          name: "mode",
          value: "OFF",
          writable: "READ_WRITE",
          data_type: "DevEnum",
          enum_label: ["OFF", "ON", "STANDBY"],
        },
        { name: "State", value: "RUNNING", writable: "READ", data_type: "DevState" },
      ]),
    ],
    [
      "sr/ps/q1",
      of([
        { name: "current", value: 100, writable: "READ_WRITE", data_type: "DevDouble", unit: "A" },
      ]),
    ],
  ]);
}

/** One write the server took: the device and attribute its path reached, and the value. */
export interface TangoWrite {
  device: string;
  attr: string;
  value: string;
  /** The path as it arrived, before decoding. */
  path: string;
}

/** A running fake; `config()` is the `[facility]`/`[tango]` TOML that points the agent at it. */
export class FakeTangoRest implements AsyncDisposable {
  readonly http: FakeHttp;
  readonly devices = devices();
  readonly writes: TangoWrite[] = [];
  readonly tangoHost = "tango.test:10000";

  constructor() {
    this.http = new FakeHttp((url, req) => this.#route(url, req));
  }

  get restUrl(): string {
    return `${this.http.origin}/tango/rest`;
  }

  config(): string {
    return `[facility]\nadapter = "tango"\n\n[tango]\nrest_url = "${this.restUrl}"\n` +
      `tango_host = "${this.tangoHost}"\ntimeout_ms = 5000\n`;
  }

  /** An attribute's value now, by its canonical name. */
  value(device: string, attr: string): number | string | undefined {
    return this.devices.get(device)?.get(attr)?.value;
  }

  #route(url: URL, req: Request): Response {
    // As a server reads a path: segments split on "/", each decoded, path parameters dropped.
    const parts = url.pathname.split("/").filter(Boolean).map((p, i) =>
      i === 4 ? decodeURIComponent(p) : decodeURIComponent(p).replace(/;.*$/, "")
    );
    if (parts[0] !== "tango" || parts[1] !== "rest" || parts[3] !== "hosts") return notFound(url);
    const rest = parts.slice(5);
    if (rest[0] !== "devices" || rest.length < 5) return notFound(url);
    const device = rest.slice(1, 4).join("/").toLowerCase();
    const attrs = this.devices.get(device);
    if (!attrs) return failure(404, "API_DeviceNotDefined", `device ${device} not defined`);
    const sub = rest.slice(4);
    if (sub.length === 1 && sub[0] === "state") {
      return Response.json({ state: "RUNNING", status: "The device is in RUNNING state." });
    }
    if (sub.length === 1 && sub[0] === "attributes") {
      return Response.json(
        [...attrs.values()].map((a) => ({ name: a.name, device, info: info(a) })),
      );
    }
    if (sub.length === 2 && sub[0] === "attributes" && sub[1] === "value") {
      return Response.json(
        url.searchParams.getAll("attr").map((name) => {
          const a = attrs.get(name.toLowerCase());
          return a
            ? { name: a.name, value: a.value, quality: "ATTR_VALID", timestamp: Date.now() }
            : { name, reason: "API_AttrNotFound", desc: `${name} not found`, severity: "ERR" };
        }),
      );
    }
    if (sub.length === 3 && sub[0] === "attributes" && sub[2] === "value") {
      const a = attrs.get((sub[1] as string).toLowerCase());
      if (!a) return failure(404, "API_AttrNotFound", `${sub[1]} not found on ${device}`);
      if (req.method === "PUT") {
        const v = url.searchParams.get("v") ?? "";
        this.writes.push({ device, attr: a.name.toLowerCase(), value: v, path: url.pathname });
        if (a.writable === "READ") {
          return failure(400, "API_AttrNotWritable", `${a.name} is read-only`);
        }
        a.value = a.data_type === "DevString" || a.data_type === "DevEnum" ? v : Number(v);
      }
      return Response.json({
        name: a.name,
        device,
        host: this.tangoHost,
        value: a.value,
        quality: "ATTR_VALID",
        timestamp: Date.now(),
      });
    }
    return notFound(url);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.http.close();
  }
}

function info(a: Attr): Record<string, unknown> {
  return {
    name: a.name,
    writable: a.writable,
    data_format: "SCALAR",
    data_type: a.data_type,
    label: a.name,
    unit: a.unit ?? "",
    description: "No description",
    min_value: a.min_value ?? "Not specified",
    max_value: a.max_value ?? "Not specified",
    ...(a.enum_label ? { enum_label: a.enum_label } : {}),
  };
}

function failure(status: number, reason: string, description: string): Response {
  return Response.json({
    errors: [{ reason, description, severity: "ERR", origin: "fake rest server" }],
    quality: "FAILURE",
    timestamp: Date.now(),
  }, { status });
}

function notFound(url: URL): Response {
  return failure(404, "NotFound", `no resource ${url.pathname}`);
}
