/** History, names and logs from the EPICS services: archiver, ChannelFinder, Olog, alarm logger. */
import assert from "node:assert/strict";
import { archiverData, binnedName } from "../../../src/adapters/epics/archiver.ts";
import { createEpics, type EpicsOptions } from "../../../src/adapters/epics/mod.ts";
import { parseLenientJson } from "../../../src/adapters/http.ts";
import { type FakeEpics, startFakeEpics } from "../../support/facility/fake_epics.ts";
import { hasSettled, ManualTimers } from "../../support/manual_timers.ts";

const HOUR = 3_600_000;

function epicsOn(fake: FakeEpics, more: EpicsOptions = {}) {
  const u = fake.urls;
  return createEpics({
    archiverUrl: u.archiver_url,
    channelFinderUrl: u.channelfinder_url,
    ologUrl: u.olog_url,
    alarmLoggerUrl: u.alarm_logger_url,
    httpTimeoutMs: 2000,
    ...more,
  });
}

function range(fake: FakeEpics, hours: number) {
  return {
    from: new Date(fake.nowMs - hours * HOUR).toISOString(),
    to: new Date(fake.nowMs).toISOString(),
  };
}

Deno.test("archive binning is chosen to stay under the point budget", async () => {
  assert.equal(binnedName("X", 0, 1_000_000, 2000), "X", "1000 s fit raw");
  assert.equal(binnedName("X", 0, 6 * HOUR, 2000), "mean_11(X)");
  assert.equal(binnedName("X", 0, 30 * 24 * HOUR, 500), "mean_5184(X)");
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const [s] = await cs.archive({
    devices: ["SR:DCCT:CURRENT"],
    ...range(fake, 6),
    maxPoints: 2000,
  });
  assert.equal(s?.ok, true);
  assert.equal(s?.units, "mA");
  assert.ok((s?.samples.length ?? 0) > 1000 && (s?.samples.length ?? 0) <= 2000);
  assert.match(fake.archiver.requests[0] ?? "", /pv=mean_11%28SR%3ADCCT%3ACURRENT%29/);
  assert.match(fake.archiver.requests[0] ?? "", /from=\d{4}-\d\d-\d\dT[\d%A.]+Z/);
});

Deno.test("bare NaN and Infinity tokens from the archiver are tolerated and left out", async () => {
  assert.deepEqual(parseLenientJson('[{"val":NaN},{"val":-Infinity},{"val":[1,NaN]}]'), [
    { val: null },
    { val: null },
    { val: [1, null] },
  ]);
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const [s] = await cs.archive({ devices: ["SR:VAC:GAUGE:01"], ...range(fake, 0.5) });
  assert.equal(s?.ok, true);
  assert.ok((s?.samples.length ?? 0) > 1700);
  assert.ok(s?.samples.every((p) => typeof p.value === "number" && Number.isFinite(p.value)));
  assert.ok(s?.samples.every((p) => p.severity === "MAJOR"), "severity 2 is MAJOR");
});

Deno.test("string, enum and waveform histories come back as such; strings fall back to raw data", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const series = await cs.archive({
    devices: ["SR:OPERATOR:MSG", "SR:MODE", "SR:ORBIT:WF"],
    ...range(fake, 3),
    maxPoints: 100,
  });
  assert.deepEqual(series.map((s) => s.ok), [true, true, true]);
  assert.equal(series[0]?.samples[0]?.value, "Beam for users");
  assert.ok((series[0]?.samples.length ?? 0) <= 100, "thinned to the budget");
  assert.ok(Array.isArray(series[2]?.samples[0]?.value));
});

Deno.test("an enum's history comes back as its state names, from the meta's ENUM_n labels", async () => {
  await using fake = startFakeEpics();
  const [mode] = await epicsOn(fake).archive({ devices: ["SR:MODE"], ...range(fake, 3) });
  const labels = ["Off", "On", "Standby"];
  assert.ok((mode?.samples.length ?? 0) >= 3);
  for (const s of mode?.samples ?? []) {
    // The fake's enum changes on the hour to index (hour % 3).
    const hour = Math.floor(Date.parse(s.time) / HOUR);
    assert.equal(s.value, labels[hour % 3], s.time);
  }
});

Deno.test("a PV unchanged in the window comes back with the value it held at the window's start", async () => {
  await using fake = startFakeEpics();
  const { from, to } = range(fake, 0.5);
  const [msg, mode] = await epicsOn(fake).archive({
    devices: ["SR:OPERATOR:MSG", "SR:MODE"],
    from,
    to,
  });
  // Archived on change: the appliance sends only the sample from before `from`.
  assert.deepEqual(msg?.samples, [
    { time: from, value: "Beam for users", severity: "NONE", since: "2020-01-01T00:00:00.000Z" },
  ]);
  assert.equal(mode?.samples[0]?.time, from, "the held state is the first sample, at `from`");
  const held = ["Off", "On", "Standby"][Math.floor(Date.parse(from) / HOUR) % 3];
  assert.equal(mode?.samples[0]?.value, held);
  assert.ok(mode?.samples.every((s) => s.time >= from && s.time < to));
});

Deno.test("a PV the archiver does not hold is 'not archived', the others still come back", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const [a, b] = await cs.archive({ devices: ["SR:GHOST:PV", "SR:BPM:01:X"], ...range(fake, 1) });
  assert.equal(a?.ok, false);
  assert.equal(a?.error, 'not archived: the archiver has no PV "SR:GHOST:PV"');
  assert.equal(b?.ok, true);
});

Deno.test("archiver HTTP 500 is a per-device error naming the archiver", async () => {
  await using fake = startFakeEpics();
  fake.archiver.faults.fail500 = true;
  const cs = epicsOn(fake);
  const [s] = await cs.archive({ devices: ["SR:BPM:01:X"], ...range(fake, 1) });
  assert.equal(s?.ok, false);
  assert.match(s?.error ?? "", /^archiver answered HTTP 500 for \/data\/getData\.json/);
});

Deno.test("slow services fail when the configured timeout ends, with a message saying so", async () => {
  await using fake = startFakeEpics();
  // The services answer a minute late: only the timeout can end a call.
  for (const svc of [fake.archiver, fake.olog, fake.alarm, fake.channelfinder]) {
    svc.faults.latencyMs = 60_000;
  }
  const timers = new ManualTimers();
  const cs = epicsOn(fake, { httpTimeoutMs: 300, timers });
  /** The call, still waiting 1 ms before its timeout and ended by it. */
  const timedOut = async <T>(call: Promise<T>): Promise<T> => {
    await timers.armed(300);
    timers.advance(299);
    assert.equal(await hasSettled(call), false, "still waiting 1 ms before the timeout");
    timers.advance(1);
    return await call;
  };
  const [s] = await timedOut(cs.archive({ devices: ["SR:BPM:01:X"], ...range(fake, 1) }));
  assert.match(
    s?.error ?? "",
    /archiver at http:\/\/127\.0\.0\.1:\d+\/retrieval did not answer within 300 ms/,
  );
  await assert.rejects(
    timedOut(cs.logs({ source: "elog", ...range(fake, 24) })),
    /Olog .* within 300 ms/,
  );
  await assert.rejects(
    timedOut(cs.logs({ source: "alarm", ...range(fake, 24) })),
    /alarm logger .* within 300 ms/,
  );
  await assert.rejects(timedOut(cs.search({ pattern: "*" })), /ChannelFinder .* within 300 ms/);
});

Deno.test("ChannelFinder pages name globs with a total, and filters by property, tag and writability", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const page = await cs.search({ pattern: "sr:bpm:*:x", limit: 5, offset: 20 });
  assert.equal(page.total, 24);
  assert.deepEqual(page.devices.map((d) => d.device), [
    "SR:BPM:21:X",
    "SR:BPM:22:X",
    "SR:BPM:23:X",
    "SR:BPM:24:X",
  ]);
  assert.equal(page.devices[0]?.description, "BPM 21 horizontal position");
  const settable = await cs.search({ pattern: "SR:*", writable: true });
  assert.deepEqual(settable.devices.map((d) => d.device), [
    "SR:COR:H01:SETPT",
    "SR:COR:H02:SETPT",
    "SR:COR:H03:SETPT",
    "SR:GHOST:PV",
    "SR:MODE",
    "SR:OPERATOR:MSG",
  ]);
  assert.ok(settable.devices.every((d) => d.writable));
  const ao = await cs.search({ pattern: "*", properties: { recordType: "ao" } });
  assert.equal(ao.total, 4, "three correctors and the ghost");
  const untagged = await cs.search({ pattern: "*", tags: ["archived"] });
  assert.equal(untagged.devices.some((d) => d.device === "SR:GHOST:PV"), false);
  const ring = await cs.search({ pattern: "*:X", subsystem: "LI" });
  assert.equal(ring.total, 0);
});

Deno.test("without ChannelFinder the archiver's getMatchingPVs pages the names", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake, { channelFinderUrl: undefined });
  const page = await cs.search({ pattern: "SR:BPM:*:X", limit: 10, offset: 10 });
  assert.equal(page.total, 24);
  assert.equal(page.devices[0]?.device, "SR:BPM:11:X");
  assert.match(fake.archiver.requests.at(-1) ?? "", /^\/retrieval\/bpl\/getMatchingPVs\?pv=/);
  const none = createEpics({});
  await assert.rejects(
    none.search({ pattern: "*" }),
    /set \[epics\] channelfinder_url or archiver_url/,
  );
});

Deno.test("Olog entries come newest first with levels as severities and devices from the text", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const entries = await cs.logs({ source: "elog", ...range(fake, 24), limit: 50 });
  assert.equal(entries.length, 12, "every 2 h over 24 h");
  const dump = entries.find((e) => e.title.startsWith("Beam dump"));
  assert.equal(dump?.severity, "MAJOR");
  assert.equal(dump?.status, "Urgent");
  assert.equal(dump?.logbook, "Operations");
  assert.ok(dump?.author);
  assert.equal(dump?.devices.length, 1);
  assert.match(
    fake.olog.requests.at(-1) ?? "",
    /start=\d{4}-\d\d-\d\d\+\d\d%3A\d\d%3A\d\d\.\d{3}&end=.*tz=UTC/,
  );
  const major = await cs.logs({ source: "elog", ...range(fake, 72), minSeverity: "MAJOR" });
  assert.ok(major.length > 0 && major.every((e) => e.severity === "MAJOR"));
  const one = await cs.logs({ source: "elog", ...range(fake, 72), device: "SR:BPM:04:X" });
  assert.ok(one.length > 0 && one.every((e) => e.devices.includes("SR:BPM:04:X")));
});

Deno.test("alarm-logger events accept both time formats, drop _ACK, and filter by severity and device", async () => {
  await using fake = startFakeEpics();
  const cs = epicsOn(fake);
  const all = await cs.logs({ source: "alarm", ...range(fake, 24), limit: 100 });
  assert.equal(all.length, 16, "every 90 min over 24 h, both time formats");
  const major = await cs.logs({ source: "alarm", ...range(fake, 72), minSeverity: "MAJOR" });
  assert.ok(major.some((e) => e.title.includes("MAJOR_ACK")));
  assert.ok(major.every((e) => e.severity === "MAJOR" || e.severity === "INVALID"));
  const vac = await cs.logs({ source: "alarm", ...range(fake, 72), device: "SR:VAC:*" });
  assert.ok(vac.length > 0 && vac.every((e) => e.devices[0] === "SR:VAC:GAUGE:01"));
  await assert.rejects(
    createEpics({}).logs({ source: "alarm", ...range(fake, 1) }),
    /set \[epics\] alarm_logger_url/,
  );
});

/** An archiver on loopback answering getData.json with `answer(pv)`, recording each pv asked. */
function scriptedArchiver(answer: (pv: string) => string | Response) {
  const asked: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname !== "/retrieval/data/getData.json") return new Response("", { status: 404 });
    const pv = url.searchParams.get("pv") ?? "";
    asked.push(pv);
    const body = answer(pv);
    return body instanceof Response
      ? body
      : new Response(body, { headers: { "content-type": "application/json" } });
  });
  const base = `http://127.0.0.1:${server.addr.port}/retrieval`;
  return {
    svc: { label: "archiver", base, timeoutMs: 2000 },
    asked,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("the appliance's real enum capture reads as the state held at the window's start", async () => {
  // spec §d.2: a Diamond appliance's answer (aapy's enum_event.json), one sample at 1625883918 s.
  const body = await Deno.readTextFile(
    new URL("./fixtures/archiver_getData_enum.json", import.meta.url),
  );
  await using archiver = scriptedArchiver(() => body);
  const from = "2021-07-10T06:00:00.000Z", to = "2021-07-10T06:10:00.000Z";
  const [s] = await archiverData(archiver.svc, { devices: ["CS-CS-MSTAT-01:MODE"], from, to });
  assert.deepEqual(archiver.asked, ["CS-CS-MSTAT-01:MODE"]);
  assert.deepEqual(s, {
    device: "CS-CS-MSTAT-01:MODE",
    units: "",
    samples: [{ time: from, value: "User", severity: "NONE", since: "2021-07-10T02:25:18.089Z" }],
    ok: true,
  });
});

/** Window [1000 s, 1100 s); events as [secs, val] with val written as the appliance writes it. */
const HELD_CASES: [string, [number, string][], [number, number][]][] = [
  ["the latest of several samples before the window is the one held", [[900, "5"], [990, "7"]], [[
    1000,
    7,
  ]]],
  ["a sample exactly at the window's start wins over the held one", [[990, "7"], [1000, "8"], [
    1050,
    "9",
  ]], [[1000, 8], [1050, 9]]],
  ["a NaN as the last sample before the window holds nothing", [[900, "5"], [990, "NaN"], [
    1050,
    "9",
  ]], [[1050, 9]]],
  ["a NaN at the window's start ends the held value", [[990, "5"], [1000, "NaN"], [1050, "6"]], [[
    1050,
    6,
  ]]],
];
for (const [name, events, expected] of HELD_CASES) {
  Deno.test(`archiver: ${name}`, async () => {
    const data = events.map(([secs, val]) =>
      `{"secs":${secs},"val":${val},"nanos":0,"severity":0,"status":0}`
    );
    await using archiver = scriptedArchiver(() =>
      `[{"meta":{"name":"X","PREC":"3"},"data":[${data.join(",")}]}]`
    );
    const [s] = await archiverData(archiver.svc, {
      devices: ["X"],
      from: new Date(1_000_000).toISOString(),
      to: new Date(1_100_000).toISOString(),
    });
    assert.deepEqual(s?.samples.map((p) => [Date.parse(p.time) / 1000, p.value]), expected);
  });
}

Deno.test("an enum's history is never a mean of indices: binned data is asked again raw", async () => {
  const meta =
    `{"name":"MODE","ENUM_0":"Shutdown","ENUM_1":"Injection","ENUM_2":"No Beam","ENUM_4":"User"}`;
  const ev = (secs: number, val: number | string) =>
    `{"secs":${secs},"val":${val},"nanos":0,"severity":0,"status":0}`;
  await using archiver = scriptedArchiver((pv) =>
    pv.startsWith("mean_")
      ? `[{"meta":${meta},"data":[${ev(0, 2.0)},${ev(86_400, 1.5)}]}]` // Shutdown/User halves: 2, "No Beam"
      : `[{"meta":${meta},"data":[${ev(3_600, 0)},${ev(43_200, 4)}]}]`
  );
  const [s] = await archiverData(archiver.svc, {
    devices: ["MODE"],
    from: new Date(0).toISOString(),
    to: new Date(2 * 86_400_000).toISOString(),
    maxPoints: 100,
  });
  assert.equal(archiver.asked.length, 2);
  assert.match(archiver.asked[0] ?? "", /^mean_\d+\(MODE\)$/);
  assert.equal(archiver.asked[1], "MODE");
  assert.deepEqual(s?.samples.map((p) => p.value), ["Shutdown", "User"]);
});

Deno.test("an enum whose mean the appliance refuses costs one raw request, not two", async () => {
  const meta = `{"name":"MODE","ENUM_0":"Shutdown","ENUM_1":"Injection"}`;
  await using archiver = scriptedArchiver((pv) =>
    pv.startsWith("mean_")
      ? new Response("Cannot compute mean of an enum PV", { status: 400 })
      : `[{"meta":${meta},"data":[{"secs":3600,"val":1,"nanos":0,"severity":0,"status":0}]}]`
  );
  const [s] = await archiverData(archiver.svc, {
    devices: ["MODE"],
    from: new Date(0).toISOString(),
    to: new Date(2 * 86_400_000).toISOString(),
    maxPoints: 100,
  });
  assert.deepEqual(archiver.asked.map((pv) => pv.replace(/_\d+/, "_N")), ["mean_N(MODE)", "MODE"]);
  assert.deepEqual(s?.samples.map((p) => p.value), ["Injection"]);
});

Deno.test("a binned series' value held from before the window has no since: a bin's start is no setting time", async () => {
  await using archiver = scriptedArchiver(() =>
    `[{"meta":{"name":"X","PREC":"3"},"data":[{"secs":-900,"val":5.5,"nanos":0,"severity":0,"status":0},` +
    `{"secs":86400,"val":6.5,"nanos":0,"severity":0,"status":0}]}]`
  );
  const from = new Date(0).toISOString();
  const [s] = await archiverData(archiver.svc, {
    devices: ["X"],
    from,
    to: new Date(2 * 86_400_000).toISOString(),
    maxPoints: 100,
  });
  assert.match(archiver.asked[0] ?? "", /^mean_\d+\(X\)$/);
  assert.deepEqual(s?.samples[0], { time: from, value: 5.5, severity: "NONE" });
});
