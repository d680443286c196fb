/**
 * A misbehaving service costs no more than its cap: bodies past the byte
 * limit are cut while streaming, Content-Length past it is refused unread,
 * pages longer than asked for are cut, and oversized pvws messages close the
 * socket with a read error that says why.
 */
import assert from "node:assert/strict";
import { createEpics, type EpicsOptions } from "../../../src/adapters/epics/mod.ts";
import { createTango } from "../../../src/adapters/tango/mod.ts";
import { startFakeEpics } from "../../support/facility/fake_epics.ts";
import { EndlessBody, FakeHttp } from "../../support/facility/fake_http.ts";
import { ManualTimers } from "../../support/manual_timers.ts";
import { waitFor as waitUntil } from "../../support/run_agent.ts";

const KiB = 1024, MiB = 1024 * KiB;
const HOUR = 3_600_000;

function window(nowMs: number) {
  return { from: new Date(nowMs - HOUR).toISOString(), to: new Date(nowMs).toISOString() };
}

Deno.test("one element without end is cut at the cap even while reading a page", async () => {
  const flood = new EndlessBody("a".repeat(4096), '["');
  await using cf = new FakeHttp((url) =>
    url.pathname.endsWith("/count") ? new Response("1") : flood.response()
  );
  const cs = createEpics({ channelFinderUrl: cf.origin, maxBytes: { channelfinder: 1 * MiB } });
  await assert.rejects(
    cs.search({ pattern: "*", limit: 10 }),
    /ChannelFinder at .*\/channels: the response exceeded 1 MiB \(\[epics\] channelfinder_max_bytes\)/,
  );
  assert.ok(flood.sent < 32 * MiB);
  await cs.close();
});

Deno.test("an endless archiver body is cut at the cap with an error naming the service, URL and key", async () => {
  await using fake = startFakeEpics();
  const flood = new EndlessBody();
  fake.archiver.faults.respond = () => flood.response();
  const cs = createEpics({
    archiverUrl: fake.urls.archiver_url,
    httpTimeoutMs: 60_000,
    maxBytes: { archiver: 1 * MiB },
  });
  const [s] = await cs.archive({ devices: ["SR:DCCT:CURRENT"], ...window(fake.nowMs) });
  assert.equal(s?.ok, false);
  assert.match(
    s?.error ?? "",
    /^archiver at http:\/\/127\.0\.0\.1:\d+\/retrieval\/data\/getData\.json: the response exceeded 1 MiB \(\[epics\] archiver_max_bytes\); .*raise the limit$/,
  );
  // The read stopped at the cap: the server got no further than its socket buffers allow.
  await waitFor(() => flood.cancelled, "the server to see the body cancelled");
  assert.ok(flood.sent < 32 * MiB, `the server pushed ${(flood.sent / MiB).toFixed(1)} MiB`);
  await cs.close();
});

Deno.test("an archiver trickling its body a few bytes at a time is ended by the request deadline", async () => {
  await using fake = startFakeEpics();
  let sent = 0;
  fake.archiver.faults.respond = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        async pull(c) {
          await new Promise((r) => setTimeout(r, 20));
          sent++;
          c.enqueue(new TextEncoder().encode(" "));
        },
      }),
      { headers: { "content-type": "application/json" } },
    );
  const cs = createEpics({ archiverUrl: fake.urls.archiver_url, httpTimeoutMs: 500 });
  const [s] = await cs.archive({ devices: ["SR:DCCT:CURRENT"], ...window(fake.nowMs) });
  assert.equal(s?.ok, false);
  assert.match(s?.error ?? "", /^archiver at http:\/\/\S+ did not answer within 500 ms/);
  assert.ok(sent > 0, "the body had begun");
  await cs.close();
});

Deno.test("an HTTP error with an endless error page is reported as the HTTP error", async () => {
  await using fake = startFakeEpics();
  const flood = new EndlessBody("<p>Internal error</p>".repeat(100), "<html>");
  fake.archiver.faults.respond = () =>
    new Response(flood.response().body, { status: 500, headers: { "content-type": "text/html" } });
  const cs = createEpics({ archiverUrl: fake.urls.archiver_url, maxBytes: { archiver: 1 * MiB } });
  const [s] = await cs.archive({ devices: ["SR:DCCT:CURRENT"], ...window(fake.nowMs) });
  assert.equal(s?.ok, false);
  // An HTML error page is named as such, without its markup.
  assert.equal(s?.error, "archiver answered HTTP 500 for /data/getData.json with an HTML page");
  assert.ok(flood.sent < 32 * MiB);
  await cs.close();
});

Deno.test("a Content-Length above the cap is refused before the body is read", async () => {
  await using fake = startFakeEpics();
  const flood = new EndlessBody();
  fake.olog.faults.respond = () => flood.response({ "content-length": String(900 * MiB) });
  const cs = createEpics({ ologUrl: fake.urls.olog_url, maxBytes: { olog: 64 * KiB } });
  await assert.rejects(
    cs.logs({ source: "elog", ...window(fake.nowMs) }),
    /^ResponseTooLargeError: Olog at http:\/\/127\.0\.0\.1:\d+\/Olog\/logs\/search: the response exceeded 64 KiB \(\[epics\] olog_max_bytes\)/,
  );
  assert.ok(flood.sent < 32 * MiB);
  await cs.close();
});

Deno.test("a body just under the cap is read whole, one byte over is refused", async () => {
  const answer = JSON.stringify([{ name: "SR:X", properties: [] }]);
  const pad = (n: number) => answer.slice(0, -1) + " ".repeat(n - answer.length) + "]";
  let size = 4096;
  await using cf = new FakeHttp((url) =>
    url.pathname.endsWith("/count") ? new Response("1") : new Response(pad(size))
  );
  const cs = createEpics({ channelFinderUrl: cf.origin, maxBytes: { channelfinder: 4096 } });
  const page = await cs.search({ pattern: "*", limit: 10 });
  assert.deepEqual(page.devices.map((d) => d.device), ["SR:X"]);
  size = 4097;
  await assert.rejects(
    cs.search({ pattern: "*", limit: 10 }),
    /ChannelFinder at .*: the response exceeded 4 KiB \(\[epics\] channelfinder_max_bytes\)/,
  );
  await cs.close();
});

Deno.test("a ChannelFinder that ignores the page size is cut to the page asked for, and says so", async () => {
  const many = Array.from({ length: 5000 }, (_, i) => ({
    name: `SR:C${String(i).padStart(4, "0")}:X`,
    properties: [{ name: "recordType", value: "ai" }],
  }));
  await using cf = new FakeHttp((url) =>
    url.pathname.endsWith("/count") ? new Response("5000") : Response.json(many)
  );
  const cs = createEpics({ channelFinderUrl: cf.origin });
  const page = await cs.search({ pattern: "SR:*", limit: 10 });
  assert.equal(page.devices.length, 10);
  assert.equal(page.devices[0]?.device, "SR:C0000:X");
  assert.equal(page.total, 5000);
  assert.match(
    page.note ?? "",
    /^ChannelFinder at http:\/\/127\.0\.0\.1:\d+ sent more than the 10 channels asked for \(it ignored ~size\); the first 10 are shown$/,
  );
  await cs.close();
});

Deno.test("a ChannelFinder streaming channels without end is read only as far as the page", async () => {
  const flood = new EndlessBody();
  await using cf = new FakeHttp((url) =>
    url.pathname.endsWith("/count") ? new Response("1000000") : flood.response()
  );
  const cs = createEpics({ channelFinderUrl: cf.origin, maxBytes: { channelfinder: 1 * MiB } });
  const page = await cs.search({ pattern: "*", limit: 10 });
  assert.equal(page.devices.length, 10);
  assert.deepEqual(new Set(page.devices.map((d) => d.device)), new Set(["X:Y:Z"]));
  assert.match(page.note ?? "", /sent more than the 10 channels asked for/);
  await waitFor(() => flood.cancelled, "the server to see the body cancelled");
  assert.ok(flood.sent < 32 * MiB, `the server pushed ${(flood.sent / MiB).toFixed(1)} MiB`);
  await cs.close();
});

Deno.test("a page that is exactly as long as asked for carries no note", async () => {
  const ten = Array.from({ length: 10 }, (_, i) => ({ name: `SR:${i}`, properties: [] }));
  await using cf = new FakeHttp((url) =>
    url.pathname.endsWith("/count") ? new Response("10") : Response.json(ten)
  );
  const cs = createEpics({ channelFinderUrl: cf.origin });
  const page = await cs.search({ pattern: "*", limit: 10 });
  assert.equal(page.devices.length, 10);
  assert.equal(page.note, undefined);
  await cs.close();
});

Deno.test("an alarm logger and an Olog that ignore the size asked for are read only as far as the page", async () => {
  await using fake = startFakeEpics();
  const at = new Date(fake.nowMs - 60_000).toISOString();
  const alarm = new EndlessBody(
    `${JSON.stringify({ pv: "SR:X", severity: "MAJOR", message: "HIGH", message_time: at })},`,
  );
  fake.alarm.faults.respond = () => alarm.response();
  const entry = { id: 1, title: "t", description: "d", level: "Info", createdDate: Date.parse(at) };
  const olog = new EndlessBody(`${JSON.stringify(entry)},`);
  fake.olog.faults.respond = () => olog.response();
  const cs = createEpics({
    alarmLoggerUrl: fake.urls.alarm_logger_url,
    ologUrl: fake.urls.olog_url,
    maxBytes: { alarm: 4 * MiB, olog: 4 * MiB },
  });
  const alarms = await cs.logs({ source: "alarm", ...window(fake.nowMs), limit: 5 });
  assert.equal(alarms.length, 5);
  assert.equal(alarms[0]?.devices[0], "SR:X");
  const elog = await cs.logs({ source: "elog", ...window(fake.nowMs), limit: 7 });
  assert.equal(elog.length, 7);
  await waitFor(() => alarm.cancelled && olog.cancelled, "both bodies cancelled");
  assert.ok(alarm.sent < 32 * MiB && olog.sent < 32 * MiB);
  await cs.close();
});

Deno.test("TANGO REST bodies are capped by [tango] max_bytes", async () => {
  const flood = new EndlessBody();
  await using rest = new FakeHttp(() => flood.response());
  const cs = createTango({ restUrl: `${rest.origin}/tango/rest`, maxBytes: 256 * KiB });
  const [r] = await cs.read(["sys/tg_test/1/ampli"]);
  assert.equal(r?.ok, false);
  assert.match(
    r?.error ?? "",
    /TANGO REST at http:\/\/127\.0\.0\.1:\d+\/tango\/rest\/.*: the response exceeded 256 KiB \(\[tango\] max_bytes\)/,
  );
  assert.ok(flood.sent < 32 * MiB);
  await cs.close();
});

function epicsOnPvws(url: string, more: EpicsOptions = {}) {
  return createEpics({
    pvwsUrl: url,
    pvget: "off",
    readTimeoutMs: 3000,
    reconnectMinMs: 20,
    ...more,
  });
}

Deno.test("a pvws message above the frame cap closes the socket, fails the read saying so, and the next read reconnects", async () => {
  await using fake = startFakeEpics();
  const pv = fake.pvws.pvs.get("SR:DCCT:CURRENT");
  assert.ok(pv);
  const plain = pv.description;
  pv.description = "x".repeat(2 * MiB);
  // The clock stands still: the next read, not the background reconnect, opens the socket again.
  const timers = new ManualTimers();
  const cs = epicsOnPvws(fake.pvws.url, { pvwsMaxFrameBytes: 512 * KiB, timers });
  const [r] = await cs.read(["SR:DCCT:CURRENT"]);
  assert.equal(r?.ok, false);
  assert.match(
    r?.error ?? "",
    /pvws gateway at ws:\/\/127\.0\.0\.1:\d+\/pvws\/pv sent a 2\.0 MiB message, over the 0\.5 MiB limit \(\[epics\] pvws_max_frame_bytes\)/,
  );
  pv.description = plain;
  const [again] = await cs.read(["SR:DCCT:CURRENT"]);
  assert.equal(again?.ok, true, again?.error);
  await cs.close();
});

Deno.test("a pvws message above Deno's own 64 MiB WebSocket limit is reported as too large, not as a drop", async () => {
  await using fake = startFakeEpics();
  const pv = fake.pvws.pvs.get("SR:DCCT:CURRENT");
  assert.ok(pv);
  pv.description = "x".repeat(65 * MiB);
  const cs = epicsOnPvws(fake.pvws.url, { pvwsMaxFrameBytes: 64 * MiB });
  const [r] = await cs.read(["SR:DCCT:CURRENT"]);
  pv.description = "";
  assert.equal(r?.ok, false);
  assert.match(
    r?.error ?? "",
    /pvws gateway at ws:\/\/\S+ sent a message over Deno's 64 MiB WebSocket limit \(\[epics\] pvws_max_frame_bytes\)/,
  );
  await cs.close();
});

Deno.test("pvws messages up to the frame cap are accepted", async () => {
  await using fake = startFakeEpics();
  const pv = fake.pvws.pvs.get("SR:DCCT:CURRENT");
  assert.ok(pv);
  pv.description = "x".repeat(200 * KiB);
  const cs = epicsOnPvws(fake.pvws.url, { pvwsMaxFrameBytes: 512 * KiB });
  const [r] = await cs.read(["SR:DCCT:CURRENT"]);
  assert.equal(r?.ok, true, r?.error);
  await cs.close();
});

/** Waits until `cond` holds, with a generous ceiling (the machine may be busy). */
async function waitFor(cond: () => boolean, what: string): Promise<void> {
  await waitUntil(cond, 60_000, what);
}
