import assert from "node:assert/strict";
import { indexSourceFor } from "../../src/adapters/mod.ts";
import { parseConfig } from "../../src/config/load.ts";
import { BASE_DEVICE_COUNT } from "../../src/facility/scale.ts";

Deno.test("the simulator's index source walks the grown facility when [simulator] devices is set", async () => {
  const plain = await indexSourceFor(parseConfig("", "test.toml"));
  const grown = await indexSourceFor(parseConfig("[simulator]\ndevices = 10000\n", "test.toml"));
  assert.ok(plain && grown);
  let n = 0;
  for await (const page of grown.records()) n += page.length;
  assert.ok(n >= 10000, `${n} records`);
  assert.match(plain.id, new RegExp(`:${BASE_DEVICE_COUNT}:`));
  assert.notEqual(plain.id, grown.id);
});

Deno.test("an EPICS facility is indexed from ChannelFinder, else the archiver, else not at all", async () => {
  const base = `[facility]\nadapter = "epics"\n[epics]\npvws_url = "http://127.0.0.1:1/pvws"\n`;
  const cf = await indexSourceFor(
    parseConfig(`${base}channelfinder_url = "http://127.0.0.1:1/ChannelFinder"\n`, "t.toml"),
  );
  assert.match(cf?.id ?? "", /^epics:channelfinder:/);
  assert.equal(cf?.refreshMs, 3_600_000);
  const aa = await indexSourceFor(
    parseConfig(`${base}archiver_url = "http://127.0.0.1:1/retrieval"\n`, "t.toml"),
  );
  assert.match(aa?.id ?? "", /^epics:archiver:/);
  assert.equal(await indexSourceFor(parseConfig(base, "t.toml")), undefined);
});

Deno.test("a TANGO facility is indexed from the REST API's device and attribute lists", async () => {
  const source = await indexSourceFor(
    parseConfig(
      `[facility]\nadapter = "tango"\n[tango]\nrest_url = "http://127.0.0.1:1/tango/rest"\n`,
      "t.toml",
    ),
  );
  assert.match(source?.id ?? "", /^tango:/);
});
