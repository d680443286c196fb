/**
 * ChannelFinder is paged the same way by a search as by the index: with the
 * `~search_after` cursor, so a page past Elasticsearch's window of 10,000 is
 * read (a real server refuses `~from` there), and with `/scroll` or `~from`
 * on servers without it.
 */
import assert from "node:assert/strict";
import { channelFinderSearch } from "../../../src/adapters/epics/channelfinder.ts";
import type { HttpService } from "../../../src/adapters/http.ts";
import type { CfChannel } from "../../support/facility/fake_epics.ts";
import { serveSecondFacility } from "../../support/facility/second_facility.ts";

const pad = (n: number) => String(n).padStart(5, "0");

/** 12,000 channels, each with a description property. */
function manyChannels(): CfChannel[] {
  return Array.from({ length: 12_000 }, (_, i) => ({
    name: `TST:CH${pad(i)}:V`,
    owner: "t",
    properties: [
      { name: "description", value: `test channel ${i}`, owner: "t", channels: [] },
      { name: "recordType", value: i % 2 ? "ai" : "ao", owner: "t", channels: [] },
    ],
    tags: [],
  }));
}

function service(origin: string): HttpService {
  return {
    label: "ChannelFinder",
    base: `${origin}/ChannelFinder/resources`,
    timeoutMs: 30_000,
    maxBytes: 64 << 20,
  };
}

Deno.test("a search page past 10,000 channels is read with the cursor, never ~from past the window", async () => {
  await using cf = serveSecondFacility({}, manyChannels());
  const page = await channelFinderSearch(service(cf.origin), {
    pattern: "TST:*",
    offset: 10_990,
    limit: 20,
  });
  assert.equal(page.total, 12_000);
  assert.deepEqual(
    page.devices.map((d) => d.device),
    Array.from({ length: 20 }, (_, i) => `TST:CH${pad(10_990 + i)}:V`),
  );
  assert.equal(page.devices[0]?.description, "test channel 10990");
  for (const r of cf.requests) {
    const from = new URL(r, "http://x").searchParams.get("~from");
    assert.ok(from === null, `asked for ~from=${from}: ${r}`);
  }
  assert.ok(cf.requests.some((r) => r.includes("search_after")));
});

Deno.test("a search on a server without the cursor pages with /scroll, and a first page asks for no more than it shows", async () => {
  await using cf = serveSecondFacility({ searchAfter: false }, manyChannels());
  const page = await channelFinderSearch(service(cf.origin), {
    pattern: "TST:*",
    offset: 10_001,
    limit: 3,
  });
  assert.deepEqual(page.devices.map((d) => d.device), [
    "TST:CH10001:V",
    "TST:CH10002:V",
    "TST:CH10003:V",
  ]);
  assert.ok(cf.requests.some((r) => r.includes("/scroll/")));
  await using small = serveSecondFacility({}, manyChannels());
  const first = await channelFinderSearch(service(small.origin), { pattern: "TST:*", limit: 5 });
  assert.equal(first.devices.length, 5);
  const asked = small.requests.find((r) => r.startsWith("/ChannelFinder/resources/channels?"));
  assert.equal(new URL(asked ?? "", "http://x").searchParams.get("~size"), "5");
});
