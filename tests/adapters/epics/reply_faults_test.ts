/**
 * The EPICS adapters against services that answer something else than their
 * protocol: HTML error pages, objects where lists belong, fields of the wrong
 * type, pvws frames that are not JSON or not updates. Each is one line that
 * names the service, what it answered and what was expected — never a
 * TypeError from inside the adapter, never "the PV did not connect".
 */
import assert from "node:assert/strict";
import { createEpics } from "../../../src/adapters/epics/mod.ts";
import { FakeHttp } from "../../support/facility/fake_http.ts";
import { ManualTimers } from "../../support/manual_timers.ts";

const NOW = Date.parse("2026-01-10T12:00:00Z");
const RANGE = { from: new Date(NOW - 3_600_000).toISOString(), to: new Date(NOW).toISOString() };
const CODE_WORDS = /is not a function|Unexpected token|Cannot read|undefined|\[object Object\]/;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}
const HTML = () =>
  new Response(
    "<!DOCTYPE html><html><head><title>Login</title></head><body>Sign in</body></html>",
    {
      headers: { "content-type": "text/html" },
    },
  );

/** Every HTTP service of the EPICS adapter on one fake that answers `answer`. */
function epicsAnswering(answer: (url: URL) => Response) {
  const server = new FakeHttp(answer);
  const base = server.origin;
  const cs = createEpics({
    archiverUrl: `${base}/retrieval`,
    channelFinderUrl: `${base}/ChannelFinder/resources`,
    ologUrl: `${base}/Olog`,
    alarmLoggerUrl: `${base}/alarms`,
    httpTimeoutMs: 2_000,
  });
  return {
    cs,
    base,
    async [Symbol.asyncDispose]() {
      await cs.close();
      await server.close();
    },
  };
}

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  assert.fail("expected the call to fail");
}

Deno.test("ChannelFinder answering an object where channels belong is reported as such", async () => {
  await using t = epicsAnswering((url) =>
    url.pathname.endsWith("/count") ? new Response("3") : json({ channels: [{ name: "A" }] })
  );
  const msg = await errorOf(t.cs.search({ pattern: "SR:*" }));
  assert.equal(
    msg,
    `ChannelFinder at ${t.base}/ChannelFinder/resources answered an object, expected a list of channels with names`,
  );
});

Deno.test("ChannelFinder channels with a property list that is text name the field", async () => {
  await using t = epicsAnswering((url) =>
    url.pathname.endsWith("/count")
      ? new Response("1")
      : json([{ name: "SR:C01:BPM1:X", properties: "recordType=ai" }])
  );
  const msg = await errorOf(t.cs.search({ pattern: "SR:*" }));
  assert.match(
    msg,
    /^ChannelFinder at .* answered a list whose \[0\]\.properties is the text "recordType=ai", expected a list of channels/,
  );
});

Deno.test("a ChannelFinder count that is not a number is an error, not a guessed total", async () => {
  await using t = epicsAnswering((url) =>
    url.pathname.endsWith("/count") ? new Response("lots") : json([{ name: "SR:C01:BPM1:X" }])
  );
  const msg = await errorOf(t.cs.search({ pattern: "SR:*" }));
  assert.match(msg, /^ChannelFinder at .* answered text that is not JSON \(status 200\): "?lots/);
});

Deno.test("an HTML page (a login proxy) where JSON was expected says so, for every service", async () => {
  await using t = epicsAnswering(HTML);
  const messages = [
    await errorOf(t.cs.search({ pattern: "SR:*" })),
    await errorOf(t.cs.logs({ source: "elog", ...RANGE })),
    await errorOf(t.cs.logs({ source: "alarm", ...RANGE })),
    (await t.cs.archive({ devices: ["SR:DCCT"], ...RANGE }))[0]?.error ?? "",
  ];
  const labels = ["ChannelFinder", "Olog", "alarm logger", "archiver"];
  messages.forEach((m, i) => {
    assert.match(
      m,
      new RegExp(
        `^${
          labels[i]
        } at http://127\\.0\\.0\\.1:\\d+/\\S+ answered an HTML page \\(status 200\\) where JSON was expected`,
      ),
    );
    assert.doesNotMatch(m, CODE_WORDS);
    assert.equal(m.split("\n").length, 1);
  });
});

Deno.test("an HTML error page with a 502 is named an HTML page, without its markup", async () => {
  await using t = epicsAnswering(() =>
    new Response("<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>", { status: 502 })
  );
  const msg = await errorOf(t.cs.logs({ source: "elog", ...RANGE }));
  assert.equal(msg, "Olog answered HTTP 502 for /logs/search with an HTML page");
});

Deno.test("malformed Olog, alarm-logger and archiver replies name the field that is wrong", async () => {
  const cases: [(url: URL) => Response, () => Promise<string>, RegExp][] = [];
  await using olog = epicsAnswering(() =>
    json({ logs: [{ id: 1, title: "x", createdDate: "yesterday" }] })
  );
  cases.push([
    HTML,
    () => errorOf(olog.cs.logs({ source: "elog", ...RANGE })),
    /^Olog at .* answered an object whose logs\[0\]\.createdDate is the text "yesterday", expected a list of log entries/,
  ]);
  await using alarm = epicsAnswering(() =>
    json([{ pv: "SR:X", severity: 2, time: "2026-01-10T11:30:00Z" }])
  );
  cases.push([
    HTML,
    () => errorOf(alarm.cs.logs({ source: "alarm", ...RANGE })),
    /^alarm logger at .* answered a list whose \[0\]\.severity is the number 2, expected a list of alarm messages/,
  ]);
  await using arch = epicsAnswering(() =>
    json([{ meta: {}, data: [{ secs: "1700000000", val: 1 }] }])
  );
  cases.push([
    HTML,
    async () => (await arch.cs.archive({ devices: ["SR:DCCT"], ...RANGE }))[0]?.error ?? "",
    /^archiver at .* answered a list whose \[0\]\.data\[0\]\.secs is the text "1700000000", expected a list of \{meta, data\}/,
  ]);
  await using names = epicsAnswering(() => json({ pvs: ["A"] }));
  const noCf = createEpics({ archiverUrl: `${names.base}/retrieval`, httpTimeoutMs: 2_000 });
  cases.push([
    HTML,
    () => errorOf(noCf.search({ pattern: "A*" })),
    /^archiver at .* answered an object, expected a list of PV names$/,
  ]);
  for (const [, run, expected] of cases) {
    const msg = await run();
    assert.match(msg, expected);
    assert.doesNotMatch(msg, CODE_WORDS);
  }
  await noCf.close();
});

Deno.test("pvws pvget answering HTML is reported as the gateway's answer, not as a PV that did not connect", async () => {
  await using server = new FakeHttp(() => HTML());
  const cs = createEpics({ pvwsUrl: `${server.origin}/pvws`, pvget: "on", readTimeoutMs: 1_000 });
  const [r] = await cs.read(["SR:DCCT"]);
  await cs.close();
  assert.equal(r?.ok, false);
  assert.match(
    r?.error ?? "",
    /^pvws pvget at http:\/\/127\.0\.0\.1:\d+\/pvws answered an HTML page \(status 200\)/,
  );
});

/** A WebSocket gateway that answers each subscribed PV with `frame(pv)`. */
function garbageGateway(frame: (pv: string) => string) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data));
      if (msg.type === "subscribe") { for (const pv of msg.pvs) socket.send(frame(pv)); }
    };
    return response;
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/pvws`,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

for (
  const [name, frame, expected] of [
    [
      "text that is not JSON",
      () => "<html>oops",
      /sent a malformed frame \(text that is not JSON: "<html>oops"\)/,
    ],
    [
      "a value that is an object",
      (pv: string) => JSON.stringify({ type: "update", pv, value: { v: 1 }, seconds: 1 }),
      /sent a malformed frame \(an update whose value is an object\)/,
    ],
    [
      "a severity that is a number",
      (pv: string) => JSON.stringify({ type: "update", pv, value: 1, severity: 2 }),
      /an update whose severity is the number 2/,
    ],
    [
      "Base64 that is not Base64",
      (pv: string) => JSON.stringify({ type: "update", pv, vtype: "VDoubleArray", b64dbl: "%%%%" }),
      /an update whose b64dbl is the text "%%%%"/,
    ],
    ["a list", () => "[1,2,3]", /sent a malformed frame \(a list that is no message\)/],
    [
      "no type",
      () => JSON.stringify({ pv: "SR:DCCT", value: 1 }),
      /sent a malformed frame \(a message without a type\)/,
    ],
  ] as const
) {
  Deno.test(`a pvws frame with ${name} is reported as a malformed frame, not a PV that did not connect`, async () => {
    await using gw = garbageGateway(frame);
    const cs = createEpics({ pvwsUrl: gw.url, pvget: "off", readTimeoutMs: 400 });
    const [r] = await cs.read(["SR:DCCT"]);
    await cs.close();
    assert.equal(r?.ok, false);
    assert.equal(r?.value, null);
    assert.match(r?.error ?? "", /the pvws gateway at ws:\/\/127\.0\.0\.1:\d+\/pvws\/pv/);
    assert.match(r?.error ?? "", expected);
    assert.doesNotMatch(r?.error ?? "", /is not a function|InvalidCharacter/);
  });
}

Deno.test("a pvget answer whose value is an object is the gateway's fault, named as such", async () => {
  await using server = new FakeHttp(() =>
    Response.json({ type: "update", pv: "SR:DCCT", value: { v: 1 }, severity: "NONE" })
  );
  const cs = createEpics({ pvwsUrl: `${server.origin}/pvws`, pvget: "on", readTimeoutMs: 1_000 });
  const [r] = await cs.read(["SR:DCCT"]);
  await cs.close();
  assert.equal(r?.ok, false);
  assert.match(
    r?.error ?? "",
    /^pvws pvget at \S+ answered an object whose value is an object, expected a PV update/,
  );
});

Deno.test("after a garbage delta a repeat read does not answer the stale value it held before", async () => {
  const sockets: WebSocket[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    sockets.push(socket);
    socket.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data));
      if (msg.type !== "subscribe") return;
      for (const pv of msg.pvs) {
        socket.send(
          JSON.stringify({ type: "update", pv, value: 1.5, severity: "NONE", seconds: 1 }),
        );
      }
    };
    return response;
  });
  const cs = createEpics({
    pvwsUrl: `http://127.0.0.1:${server.addr.port}/pvws`,
    pvget: "off",
    readTimeoutMs: 1_000,
    monitorLingerMs: 5_000,
    // The clock stands still: the PV lingers, subscribed, for the whole test.
    timers: new ManualTimers(),
  });
  try {
    assert.equal((await cs.read(["SR:DCCT"]))[0]?.value, 1.5);
    const heard = new Promise<void>((resolve) => {
      const stop = cs.pvws?.watch("SR:DCCT", (_state, error) => {
        if (error) resolve(stop?.());
      });
    });
    for (const s of sockets) s.send(JSON.stringify({ type: "update", pv: "SR:DCCT", value: [1] }));
    await heard;
    const [again] = await cs.read(["SR:DCCT"]);
    assert.equal(again?.ok, false, JSON.stringify(again));
    assert.match(again?.error ?? "", /malformed frame \(an update whose value is a list\)/);
  } finally {
    await cs.close();
    await server.shutdown();
  }
});
