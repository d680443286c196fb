/**
 * A TANGO facility's namespace reaches the device index whole and bounded:
 * the device list paged with ?range= as the reference server pages it, every
 * device's attributes with label, description, unit and writability; a dead
 * device is skipped and named; caps hold before attributes are read. Also
 * on a real TangoTest through the REST bridge.
 */
import assert from "node:assert/strict";
import { basicAuth, type HttpService } from "../../../src/adapters/http.ts";
import { facilityIndexSource } from "../../../src/adapters/index_source.ts";
import { TangoIndexSource } from "../../../src/adapters/tango/index_source.ts";
import { parseConfig } from "../../../src/config/mod.ts";
import type { IndexRecord } from "../../../src/index/record.ts";
import { DEAD_DEVICE, FakeTango } from "../../support/facility/fake_tango.ts";
import { HAS_TANGO, startTango } from "../../support/facility/tango_server.ts";

const DEVICES = 700;

function source(fake: FakeTango, o: { version?: string; max?: number; page?: number } = {}) {
  const svc: HttpService = {
    label: "TANGO REST",
    base: fake.restUrl,
    timeoutMs: 10_000,
    maxBytes: 16 * 1024 * 1024,
    maxBytesKey: "[tango] max_bytes",
  };
  return new TangoIndexSource({
    svc,
    apiVersion: o.version ?? "v11",
    tangoHost: "tango-db:10000",
    maxAttributes: o.max ?? 1_000_000,
    refreshMs: 0,
    pageSize: o.page ?? 200,
  });
}

async function all(s: TangoIndexSource): Promise<IndexRecord[]> {
  const out: IndexRecord[] = [];
  for await (const page of s.records()) out.push(...page);
  return out;
}

Deno.test("every attribute of a few thousand reaches the index, the device list paged by range as the reference server pages it", async () => {
  await using fake = new FakeTango(DEVICES);
  const s = source(fake);
  const records = await all(s);
  assert.ok(fake.attributeCount > 2500, String(fake.attributeCount));
  assert.equal(records.length, fake.attributeCount);
  assert.equal(new Set(records.map((r) => r.name)).size, records.length);
  assert.deepEqual(s.skipped.map((x) => x.device), [DEAD_DEVICE]);
  assert.match(
    s.skipped[0]?.error ?? "",
    /API_DeviceNotExported: Device sr\/bpm\/c01-1 is not exported/,
  );
  const ranges = fake.http.requests.filter((r) => r.includes("range="))
    .map((r) => new URLSearchParams(r.split("?")[1]).get("range"));
  assert.deepEqual(ranges, ["0-1", "0-200", "200-400", "400-600", "600-700"]);
  const x = records.find((r) => r.name === "sr/bpm/c07-2/X");
  assert.deepEqual(x, {
    name: "sr/bpm/c07-2/X",
    description: "Horizontal beam position",
    units: "mm",
    writable: false,
    properties: {
      domain: "sr",
      family: "bpm",
      member: "c07-2",
      attribute: "X",
      label: "X",
      data_type: "DevDouble",
      data_format: "SCALAR",
      writable: "READ",
    },
    tags: ["scalar"],
  });
  const current = records.find((r) => r.name === "sr/ps-hcor/c07-2/Current");
  assert.equal(current?.writable, true);
  assert.equal(current?.units, "A");
  // TANGO's placeholders are not descriptions or units; a label that says more is.
  const sum = records.find((r) => r.name === "sr/bpm/c07-2/Sum");
  assert.equal(sum?.description, "");
  assert.equal(sum?.units, "");
  assert.equal(
    records.find((r) => r.name === "sr/vac-ip/c07-2/History")?.description,
    "Pressure history",
  );
});

Deno.test("on rc4 the page element that describes the page is not taken for a device", async () => {
  await using fake = new FakeTango(300);
  const s = source(fake, { version: "rc4", page: 100 });
  const names = await s.devices();
  assert.equal(names.length, 300);
  assert.ok(!names.includes("partial_content"));
});

Deno.test("a server that ignores range sends the whole list once, and it is used", async () => {
  await using fake = new FakeTango(300, { ignoreRange: true });
  const names = await source(fake, { page: 100 }).devices();
  assert.equal(names.length, 300);
  assert.equal(fake.http.requests.length, 1);
});

Deno.test("an empty device list is a 416 for the first range and means no devices", async () => {
  await using fake = new FakeTango(0);
  assert.deepEqual(await all(source(fake)), []);
});

Deno.test("more devices than index_max_attributes is refused before any attribute is read", async () => {
  await using fake = new FakeTango(DEVICES);
  await assert.rejects(
    all(source(fake, { max: 500 })),
    /TANGO REST at .* holds 700 devices, more than \[tango\] index_max_attributes = 500; raise it/,
  );
  assert.ok(!fake.http.requests.some((r) => r.includes("/attributes")));
  await using whole = new FakeTango(DEVICES, { ignoreRange: true });
  await assert.rejects(all(source(whole, { max: 500 })), /holds more than 500 devices/);
  await assert.rejects(all(source(whole, { max: 1000 })), /holds more than 1000 attributes/);
});

Deno.test("the configured TANGO facility's index source reads [tango]", async () => {
  const config = parseConfig(
    `[facility]\nadapter = "tango"\n[tango]\nrest_url = "http://rest:10001/tango/rest/"\n` +
      `tango_host = "db:10000"\nindex_refresh_s = 0\n`,
    "test.toml",
  );
  const s = await facilityIndexSource(config, () => undefined);
  assert.ok(s instanceof TangoIndexSource);
  assert.equal(s.id, "tango:http://rest:10001/tango/rest/v11/db:10000");
  assert.equal(s.refreshMs, 0);
});

Deno.test({
  name: "TangoTest: its attributes reach the index with their units, writability and types",
  ignore: !HAS_TANGO && !Deno.env.get("CI"),
  async fn() {
    await using server = await startTango();
    const open = (apiVersion: string) =>
      new TangoIndexSource({
        svc: {
          label: "TANGO REST",
          base: server.restUrl,
          timeoutMs: 10_000,
          authorization: basicAuth((n) => server.env[n], "TANGO_REST_USER", "TANGO_REST_PASSWORD"),
        },
        apiVersion,
        tangoHost: server.tangoHost,
        maxAttributes: 10_000,
        refreshMs: 0,
      });
    // rc4 pages carry a partial_content element: still one device.
    assert.deepEqual(await open("rc4").devices(), ["sys/tg_test/1"]);
    const s = open("v11");
    const records: IndexRecord[] = [];
    for await (const page of s.records()) records.push(...page);
    assert.deepEqual(s.skipped, []);
    const byName = new Map(records.map((r) => [r.name, r]));
    assert.ok(records.length > 40, String(records.length));
    assert.ok(records.every((r) => r.name.startsWith("sys/tg_test/1/")));
    assert.equal(byName.get("sys/tg_test/1/double_scalar")?.writable, true);
    assert.equal(byName.get("sys/tg_test/1/double_scalar")?.properties.data_type, "DevDouble");
    assert.equal(byName.get("sys/tg_test/1/short_scalar_ro")?.writable, false);
    assert.equal(byName.get("sys/tg_test/1/float_scalar")?.description, "A float attribute");
    assert.deepEqual(byName.get("sys/tg_test/1/double_spectrum")?.tags, ["spectrum"]);
    assert.equal(byName.get("sys/tg_test/1/State")?.properties.member, "1");
  },
});
