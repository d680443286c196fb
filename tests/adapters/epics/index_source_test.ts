/**
 * An EPICS facility's namespace reaches the device index whole and bounded:
 * every ChannelFinder channel with its properties and tags, paged past the
 * Elasticsearch window with ~search_after (or ~from on a server without it),
 * a cap on the total checked before any page, pages within the byte cap;
 * without ChannelFinder, the archiver's PV list.
 */
import assert from "node:assert/strict";
import type { HttpService } from "../../../src/adapters/http.ts";
import {
  ArchiverSource,
  ChannelFinderSource,
  epicsIndexSource,
} from "../../../src/adapters/epics/index_source.ts";
import { facilityIndexSource, refreshDue } from "../../../src/adapters/index_source.ts";
import { parseConfig } from "../../../src/config/mod.ts";
import type { IndexRecord, IndexSource } from "../../../src/index/record.ts";
import { generatedPvs, NOT_ARCHIVED } from "../../support/facility/epics_data.ts";
import { type FakeEpicsOptions, startFakeEpics } from "../../support/facility/fake_epics.ts";

const GENERATED = 5000;

function fakeWith(opts: FakeEpicsOptions = {}) {
  return startFakeEpics({
    ...opts,
    edit: (data) => Object.assign(data.pvs, generatedPvs(GENERATED)),
  });
}

function cfService(base: string, maxBytes = 16 * 1024 * 1024): HttpService {
  return {
    label: "ChannelFinder",
    base,
    timeoutMs: 10_000,
    maxBytes,
    maxBytesKey: "[epics] channelfinder_max_bytes",
  };
}

async function all(source: IndexSource, signal?: AbortSignal): Promise<IndexRecord[]> {
  const out: IndexRecord[] = [];
  for await (const page of source.records(signal)) out.push(...page);
  return out;
}

const HOUR_MS = 3_600_000;

Deno.test("every ChannelFinder channel reaches the index with its properties and tags, paged past the Elasticsearch window", async () => {
  await using fake = fakeWith({ maxResultWindow: 2000 });
  const total = Object.keys(generatedPvs(GENERATED)).length + 34;
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1_000_000,
    refreshMs: HOUR_MS,
  });
  const records = await all(source);
  const names = records.map((r) => r.name);
  assert.ok(records.length >= GENERATED, String(records.length));
  assert.equal(new Set(names).size, records.length, "no channel twice");
  assert.deepEqual(names, [...names].sort(), "in name order");
  const count = Number(
    await (await fetch(`${fake.urls.channelfinder_url}/channels/count?~name=*`)).text(),
  );
  assert.equal(records.length, count);
  assert.ok(total >= count);
  const bpm = records.find((r) => r.name === "SR:C07:BPM:1:X");
  assert.deepEqual(bpm, {
    name: "SR:C07:BPM:1:X",
    description: "Cell 7 BPM 1 horizontal position",
    units: "",
    writable: false,
    properties: {
      recordType: "ai",
      recordDesc: "Cell 7 BPM 1 horizontal position",
      iocName: "C07",
      pvStatus: "Active",
    },
    tags: ["archived"],
  });
  assert.equal(records.find((r) => r.name === "SR:C07:HCOR:1:SETPT")?.writable, true);
  assert.deepEqual(records.find((r) => r.name === "SR:GHOST:PV")?.tags, []);
  // Pages of 1,000 by cursor: none asked past the window, none asked twice.
  const pages = fake.channelfinder.requests.filter((r) =>
    r.startsWith("/ChannelFinder/resources/channels?")
  );
  assert.equal(pages.length, Math.floor(count / 1000) + 1);
  for (const p of pages) {
    const q = new URLSearchParams(p.split("?")[1]);
    assert.equal(q.get("~from"), null, p);
    assert.equal(q.get("~size"), "1000");
  }
});

Deno.test("a ChannelFinder that ignores ~search_after is read through /scroll, past its window", async () => {
  await using fake = fakeWith({ searchAfter: false, maxResultWindow: 2000 });
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1_000_000,
    refreshMs: 0,
  });
  const names = (await all(source)).map((r) => r.name);
  assert.ok(names.length >= GENERATED);
  assert.equal(new Set(names).size, names.length);
  assert.deepEqual(names, [...names].sort());
  const scrolls = fake.channelfinder.requests.filter((r) => r.includes("/scroll/"));
  assert.equal(scrolls.length, Math.floor(names.length / 1000));
  assert.ok(!fake.channelfinder.requests.some((r) => /[?&](~|%7E)from=/.test(r)));
});

Deno.test("a ChannelFinder that ignores ~search_after and has no /scroll is paged with ~from inside its window", async () => {
  await using fake = fakeWith({ searchAfter: false, scroll: false });
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1_000_000,
    refreshMs: 0,
    pageSize: 700,
  });
  const names = (await all(source)).map((r) => r.name);
  assert.ok(names.length >= GENERATED);
  assert.equal(new Set(names).size, names.length);
  assert.ok(
    fake.channelfinder.requests.some((r) => r.includes("%7Efrom=700") || r.includes("~from=700")),
  );
});

Deno.test("a ChannelFinder without ~search_after or /scroll, whose window is smaller than the namespace, fails with what to do", async () => {
  await using fake = fakeWith({ searchAfter: false, scroll: false, maxResultWindow: 2000 });
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1_000_000,
    refreshMs: 0,
  });
  await assert.rejects(
    all(source),
    (e: Error) => {
      assert.match(
        e.message,
        /ChannelFinder at .* refused the page from channel 2000 \(HTTP 400\): it ignores ~search_after, has no \/scroll, and its Elasticsearch window ends there/,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    },
  );
});

Deno.test("a namespace larger than index_max_channels is refused from its count, before any page is read", async () => {
  await using fake = fakeWith();
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1000,
    refreshMs: 0,
  });
  await assert.rejects(
    all(source),
    /ChannelFinder at .* holds 50\d\d channels, more than \[epics\] index_max_channels = 1000; raise it/,
  );
  assert.deepEqual(
    fake.channelfinder.requests.map((r) => r.split("?")[0]),
    ["/ChannelFinder/resources/channels/count"],
  );
});

Deno.test("a ChannelFinder whose count understates its channels is stopped at the cap while paging", async () => {
  await using fake = fakeWith();
  fake.channelfinder.faults.respond = (url) =>
    url.pathname.endsWith("/count") ? new Response("10") : undefined;
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1500,
    refreshMs: 0,
  });
  await assert.rejects(
    all(source),
    /holds 2000 channels, more than \[epics\] index_max_channels = 1500/,
  );
});

Deno.test("a channel page past channelfinder_max_bytes fails naming the key", async () => {
  await using fake = fakeWith();
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url, 64 * 1024), {
    maxChannels: 1_000_000,
    refreshMs: 0,
  });
  await assert.rejects(
    all(source),
    /the response exceeded 64 KiB \(\[epics\] channelfinder_max_bytes\)/,
  );
});

Deno.test("a ChannelFinder page of something else than channels is reported as such", async () => {
  await using fake = fakeWith();
  fake.channelfinder.faults.respond = (url) =>
    url.pathname.endsWith("/count") ? undefined : Response.json([{ title: "not a channel" }]);
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1_000_000,
    refreshMs: 0,
  });
  await assert.rejects(
    all(source),
    /ChannelFinder at .* answered .*expected a list of channels with names/,
  );
});

Deno.test("a walk over ChannelFinder stops when its signal aborts", async () => {
  await using fake = fakeWith();
  const source = new ChannelFinderSource(cfService(fake.urls.channelfinder_url), {
    maxChannels: 1_000_000,
    refreshMs: 0,
  });
  const ac = new AbortController();
  let pages = 0;
  await assert.rejects(async () => {
    for await (const _ of source.records(ac.signal)) {
      if (++pages === 2) ac.abort();
    }
  });
  assert.equal(pages, 2);
  assert.ok(fake.channelfinder.requests.length <= 4);
});

Deno.test("without ChannelFinder, every archived PV reaches the index, capped by index_max_channels", async () => {
  await using fake = fakeWith();
  const svc: HttpService = { label: "archiver", base: fake.urls.archiver_url, timeoutMs: 10_000 };
  const records = await all(new ArchiverSource(svc, { maxChannels: 1_000_000, refreshMs: 0 }));
  assert.ok(records.length >= GENERATED);
  assert.ok(records.every((r) => !NOT_ARCHIVED.has(r.name) && r.tags[0] === "archived"));
  assert.ok(records.some((r) => r.name === "SR:C30:RF:1:FWD:PWR"));
  await assert.rejects(
    all(new ArchiverSource(svc, { maxChannels: 100, refreshMs: 0 })),
    /archiver at .* holds more than \[epics\] index_max_channels = 100 PVs; raise it/,
  );
  assert.match(
    fake.archiver.requests.at(-1) ?? "",
    /^\/retrieval\/bpl\/getMatchingPVs\?pv=\*&limit=101$/,
  );
});

Deno.test("the configured facility's index source: ChannelFinder first, then the archiver; none for the simulator", async () => {
  await using fake = fakeWith();
  const cfg = (text: string) => parseConfig(text, "test.toml");
  const epics = await facilityIndexSource(cfg(fake.config({ index_refresh_s: 600 })));
  assert.ok(epics instanceof ChannelFinderSource);
  assert.equal(epics.id, `epics:channelfinder:${fake.urls.channelfinder_url}`);
  assert.equal(epics.refreshMs, 600_000);
  const archiverOnly = await facilityIndexSource(
    cfg(`[facility]\nadapter = "epics"\n[epics]\narchiver_url = "${fake.urls.archiver_url}"\n`),
  );
  assert.ok(archiverOnly instanceof ArchiverSource);
  assert.equal(archiverOnly.refreshMs, 3_600_000);
  assert.equal(await facilityIndexSource(cfg("")), undefined);
  assert.throws(
    () => epicsIndexSource({ maxChannels: 1, refreshMs: 0 }),
    /no name service to index: set \[epics\] channelfinder_url or archiver_url/,
  );
  assert.throws(
    () => cfg("[epics]\nindex_refresh_s = -1\n"),
    /key epics\.index_refresh_s: must be at least 0/,
  );
  assert.throws(
    () => cfg("[tango]\nindex_max_attributes = 0\n"),
    /key tango\.index_max_attributes: must be at least 1/,
  );
});

Deno.test("an index is due to be read again once index_refresh_s has passed, never when it is 0", () => {
  const svc: HttpService = { label: "archiver", base: "http://a/retrieval", timeoutMs: 1000 };
  const hourly = new ArchiverSource(svc, { maxChannels: 1, refreshMs: HOUR_MS });
  assert.equal(refreshDue(hourly, 0, HOUR_MS - 1), false);
  assert.equal(refreshDue(hourly, 0, HOUR_MS), true);
  const manual = new ArchiverSource(svc, { maxChannels: 1, refreshMs: 0 });
  assert.equal(refreshDue(manual, 0, 100 * HOUR_MS), false);
  const plain: IndexSource = { id: "simulator", records: async function* () {} };
  assert.equal(refreshDue(plain, 0, 100 * HOUR_MS), false);
});
