/**
 * A fake TANGO REST server (spec §h) for name-service tests at scale: a
 * generated storage ring of devices with attribute lists and AttributeInfo,
 * the device list filtered by `wildcard` and paged by `?range=a-b` exactly as
 * the reference server's PartitionProvider pages it — end exclusive; 206 with
 * `Content-Range: items a-b/N`; `X-size` on a whole list; 416 (a TANGO
 * failure body) for a range whose end is past the list or not after its
 * start; on rc4, an extra `partial_content` element at the end of a page.
 * One device is not exported: listing its attributes fails as the server does.
 *
 * @module
 */
import { FakeHttp, globRe } from "./fake_http.ts";

/** One generated attribute: name, AttributeInfo fields. */
interface FakeAttr {
  name: string;
  label: string;
  description: string;
  unit: string;
  writable: string;
  data_type: string;
  data_format: string;
}

const FAMILIES: { family: string; attrs: Omit<FakeAttr, "name">[]; names: string[] }[] = [
  {
    family: "bpm",
    names: ["X", "Y", "Sum"],
    attrs: [
      {
        label: "X",
        description: "Horizontal beam position",
        unit: "mm",
        writable: "READ",
        data_type: "DevDouble",
        data_format: "SCALAR",
      },
      {
        label: "Y",
        description: "Vertical beam position",
        unit: "mm",
        writable: "READ",
        data_type: "DevDouble",
        data_format: "SCALAR",
      },
      {
        label: "Sum",
        description: "No description",
        unit: "No unit",
        writable: "READ",
        data_type: "DevDouble",
        data_format: "SCALAR",
      },
    ],
  },
  {
    family: "ps-hcor",
    names: ["Current", "Voltage"],
    attrs: [
      {
        label: "Current setpoint",
        description: "Horizontal corrector current",
        unit: "A",
        writable: "READ_WRITE",
        data_type: "DevDouble",
        data_format: "SCALAR",
      },
      {
        label: "Voltage",
        description: "Output voltage",
        unit: "V",
        writable: "READ",
        data_type: "DevDouble",
        data_format: "SCALAR",
      },
    ],
  },
  {
    family: "vac-ip",
    names: ["Pressure", "History"],
    attrs: [
      {
        label: "Pressure",
        description: "Ion pump pressure",
        unit: "mbar",
        writable: "READ",
        data_type: "DevDouble",
        data_format: "SCALAR",
      },
      {
        label: "Pressure history",
        description: "No description",
        unit: "mbar",
        writable: "READ",
        data_type: "DevDouble",
        data_format: "SPECTRUM",
      },
    ],
  },
];

/** Every device also has these. */
const COMMON: FakeAttr[] = [
  {
    name: "State",
    label: "State",
    description: "No description",
    unit: "",
    writable: "READ",
    data_type: "DevState",
    data_format: "SCALAR",
  },
  {
    name: "Status",
    label: "Status",
    description: "No description",
    unit: "",
    writable: "READ",
    data_type: "DevString",
    data_format: "SCALAR",
  },
];

/** The generated devices: `sr/bpm/c07-3`, `sr/ps-hcor/c07-3`, `sr/vac-ip/c07-3`… */
export function fakeTangoDevices(count: number): Map<string, FakeAttr[]> {
  const out = new Map<string, FakeAttr[]>();
  for (let k = 0; k < count; k++) {
    const f = FAMILIES[k % FAMILIES.length] as (typeof FAMILIES)[number];
    const n = Math.floor(k / FAMILIES.length);
    const member = `c${String((n % 30) + 1).padStart(2, "0")}-${Math.floor(n / 30) + 1}`;
    const attrs = f.names.map((name, i) => ({ name, ...(f.attrs[i] as Omit<FakeAttr, "name">) }));
    out.set(`sr/${f.family}/${member}`, [...attrs, ...COMMON]);
  }
  return out;
}

/** The device whose attribute list fails (not exported). */
export const DEAD_DEVICE = "sr/bpm/c01-1";

/** A running fake REST server; `restUrl` is the `[tango] rest_url`. */
export class FakeTango implements AsyncDisposable {
  readonly http: FakeHttp;
  readonly devices: Map<string, FakeAttr[]>;

  constructor(count: number, readonly opts: { ignoreRange?: boolean } = {}) {
    this.devices = fakeTangoDevices(count);
    this.http = new FakeHttp((url) => this.#route(url));
  }

  get restUrl(): string {
    return `${this.http.origin}/tango/rest`;
  }

  /** Attributes served, all devices but the dead one. */
  get attributeCount(): number {
    let n = 0;
    for (const [d, attrs] of this.devices) if (d !== DEAD_DEVICE) n += attrs.length;
    return n;
  }

  #route(url: URL): Response {
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    // /tango/rest/{ver}/hosts/{host}/devices[/d/f/m/attributes]
    if (parts[0] !== "tango" || parts[1] !== "rest" || parts[3] !== "hosts") return notFound(url);
    const version = parts[2] ?? "";
    const rest = parts.slice(5);
    if (rest.length === 1 && rest[0] === "devices") {
      const wildcard = globRe(url.searchParams.get("wildcard") ?? "*/*/*");
      const prefix = `/tango/rest/${version}/hosts/${parts[4]}/devices`;
      const list = [...this.devices.keys()].filter((d) => wildcard.test(d)).map((name) => ({
        name,
        alias: null,
        href: `${prefix}/${name}`,
      }));
      return this.#partition(list, url, version);
    }
    if (rest.length === 5 && rest[0] === "devices" && rest[4] === "attributes") {
      const device = rest.slice(1, 4).join("/");
      const attrs = this.devices.get(device);
      if (attrs === undefined) return notFound(url);
      if (device === DEAD_DEVICE) {
        return failure(
          503,
          "API_DeviceNotExported",
          `Device ${device} is not exported (hint: start the device server)`,
        );
      }
      return Response.json(attrs.map((info) => ({
        id: `${parts[4]}/${device}/${info.name}`,
        name: info.name,
        device,
        host: parts[4],
        info,
      })));
    }
    return notFound(url);
  }

  /** PartitionProvider, as the reference server implements it. */
  #partition(list: unknown[], url: URL, version: string): Response {
    const size = list.length;
    const range = url.searchParams.get("range");
    if (range === null || this.opts.ignoreRange) {
      return Response.json(list, { headers: { "accept-ranges": "items", "x-size": String(size) } });
    }
    const [a = "", b = ""] = range.split("-");
    const start = Number.parseInt(a, 10);
    const end = Number.parseInt(b, 10);
    if (!(start >= 0) || !Number.isFinite(end) || end > size || start >= end) {
      return failure(
        416,
        "IllegalArgumentException",
        end > size
          ? `end of the range can not be greater than total size=${size}`
          : "start of the range can not be greater or equal to its end",
      );
    }
    const page: unknown[] = list.slice(start, end);
    if (version === "rc4") {
      page.push({ name: "partial_content", total: size, offset: start, limit: end, _links: {} });
    }
    return Response.json(page, {
      status: 206,
      headers: { "accept-ranges": "items", "content-range": `items ${start}-${end}/${size}` },
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.http.close();
  }
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
