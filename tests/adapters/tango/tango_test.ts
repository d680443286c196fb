/** The TANGO adapter on a real TangoTest (sys/tg_test/1) through the REST bridge, and its error bodies. */
import assert from "node:assert/strict";
import { basicAuth } from "../../../src/adapters/http.ts";
import { createTango, splitName } from "../../../src/adapters/tango/mod.ts";
import { tangoErrorText } from "../../../src/adapters/tango/rest.ts";
import { HAS_TANGO, startTango, type TangoServer } from "../../support/facility/tango_server.ts";

const ignore = !HAS_TANGO && !Deno.env.get("CI");
const D = "sys/tg_test/1";

function adapter(server: TangoServer, apiVersion = "v11") {
  return createTango({
    restUrl: server.restUrl,
    tangoHost: server.tangoHost,
    apiVersion,
    authorization: basicAuth((n) => server.env[n], "TANGO_REST_USER", "TANGO_REST_PASSWORD"),
  });
}

Deno.test("TANGO error bodies give reason and description, whether spelt description or desc", () => {
  const spec = {
    errors: [{ reason: "TangoProxyException", description: "proxy has throw", severity: "ERR" }],
    quality: "FAILURE",
  };
  assert.equal(tangoErrorText(spec), "TangoProxyException: proxy has throw");
  assert.equal(
    tangoErrorText({ name: "x", reason: "exception test", desc: "here it is", origin: "o" }),
    "exception test: here it is",
  );
  assert.equal(tangoErrorText({ name: "x", value: 1, quality: "ATTR_VALID" }), undefined);
  assert.deepEqual(splitName("sys/tg_test/1/ampli"), { device: D, attr: "ampli" });
  assert.deepEqual(splitName(D), { device: D, attr: undefined });
  assert.equal(splitName("SR:BPM:01:X"), undefined);
});

Deno.test({
  name: "TangoTest: string_scalar round-trips exactly, double_scalar does not, ampli is write-only",
  ignore,
  async fn() {
    await using server = await startTango();
    const cs = adapter(server);
    await cs.write(`${D}/string_scalar`, "ramp to 3 GeV");
    assert.equal((await cs.read([`${D}/string_scalar`]))[0]?.value, "ramp to 3 GeV");
    await cs.write(`${D}/double_scalar`, 4);
    const twice = await cs.read([`${D}/double_scalar`, `${D}/double_scalar`]);
    assert.ok(twice.every((r) => typeof r.value === "number"));
    // TangoTest reads write_value × sin(k°) with k moving on each read: never twice the 4 written.
    assert.ok(twice.some((r) => r.value !== 4), JSON.stringify(twice.map((r) => r.value)));
    const [ampli] = await cs.describe([`${D}/ampli`]);
    assert.equal(ampli?.writable, true);
    await cs.write(`${D}/ampli`, 2.5);
    assert.equal(
      (await cs.read([`${D}/ampli`]))[0]?.value,
      2.5,
      "a write-only attribute reads its set point",
    );
    await cs.close();
  },
});

Deno.test({
  name: "TangoTest: throw_exception fails alone; wrong devices and attributes fail per name",
  ignore,
  async fn() {
    await using server = await startTango();
    const cs = adapter(server);
    const readings = await cs.read([
      `${D}/throw_exception`,
      `${D}/long_scalar_w`,
      `${D}/no_such_attr`,
      "sys/tg_test/9/x",
      D,
    ]);
    assert.equal(readings[0]?.error, "exception test: here is the exception you requested");
    assert.equal(readings[1]?.ok, true);
    assert.equal(readings[2]?.ok, false);
    assert.match(readings[2]?.error ?? "", /no_such_attr/);
    assert.match(readings[3]?.error ?? "", /sys\/tg_test\/9 .*HTTP 404/);
    assert.equal(readings[4]?.value, "RUNNING");
    assert.equal(readings[4]?.status, "The device is in RUNNING state.");
    await assert.rejects(cs.write(`${D}/long_scalar_rww`, 3), /API_AttrNotWritable.*HTTP 400/);
    await cs.close();
  },
});

Deno.test({
  name: "TangoTest: rc4 paths work too, and search filters by writability across pages",
  ignore,
  async fn() {
    await using server = await startTango();
    const cs = adapter(server, "rc4");
    const [s] = await cs.read([`${D}/string_scalar`]);
    assert.equal(s?.value, "Default string");
    const all = await cs.search({ pattern: `${D}/*`, limit: 500 });
    const ro = await cs.search({ pattern: `${D}/*`, writable: false, limit: 500 });
    assert.ok(ro.devices.every((d) => !d.writable));
    assert.ok(ro.total > 5 && ro.total < all.total);
    assert.ok(ro.devices.some((d) => d.device === `${D}/short_scalar_ro`));
    const none = await cs.search({ pattern: "sys/nothing/*/*" });
    assert.equal(none.total, 0);
    await cs.close();
  },
});
