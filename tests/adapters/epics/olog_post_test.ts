/**
 * Posting to Olog as its REST API takes entries (spec §f.4), against a fake
 * that records what it receives, and against a hostile Olog: no credentials
 * or wrong ones, 500s, a slow answer, a giant reply, a redirect, a reply
 * without an id, a search that ignores its filter.
 *
 * @module
 */
import assert from "node:assert/strict";
import { OlogLogbook } from "../../../src/adapters/epics/olog_post.ts";
import { type LogbookEntry, UncertainPostError } from "../../../src/adapters/logbook.ts";
import { EndlessBody, FakeHttp } from "../../support/facility/fake_http.ts";
import { FakeOlog } from "../../support/facility/fake_olog.ts";

function entry(over: Partial<LogbookEntry> = {}): LogbookEntry {
  return {
    draftId: crypto.randomUUID(),
    title: "Plan completed: trim H01",
    body:
      "**Outcome:** completed\n\n| Device | Before |\n| --- | --- |\n| `SR:COR:H01:SETPT` | 0.5 |\n",
    level: "Info",
    logbooks: ["Operations"],
    tags: ["Beam"],
    devices: ["SR:COR:H01:SETPT"],
    author: "tester",
    attachments: [],
    ...over,
  };
}

function olog(opts: { credentials?: "right" | "wrong" | "none"; timeoutMs?: number } = {}) {
  const service = new FakeOlog([]);
  const http = new FakeHttp((url, req) => service.handle(url, req));
  const creds = opts.credentials ?? "right";
  const logbook = new OlogLogbook({
    base: `${http.origin}/Olog/`,
    authorization: creds === "none"
      ? undefined
      : `Basic ${btoa(`${service.user}:${creds === "right" ? service.password : "guess"}`)}`,
    timeoutMs: opts.timeoutMs ?? 30_000,
    maxBytes: 64 * 1024,
  });
  return { service, http, logbook, [Symbol.asyncDispose]: () => http.close() };
}

Deno.test("an entry is PUT as commonmark JSON with its logbooks, tags and draft property; find sees it", async () => {
  await using o = olog();
  const e = entry();
  const posted = await o.logbook.post(e);
  const [got] = o.service.received;
  assert.equal(got?.path, "/Olog/logs?markup=commonmark");
  assert.equal(got?.contentType, "application/json");
  assert.deepEqual(got?.entry, {
    title: e.title,
    description: e.body,
    level: "Info",
    logbooks: [{ name: "Operations" }],
    tags: [{ name: "Beam" }],
    properties: [{ name: "AccelAgent", attributes: [{ name: "draft", value: e.draftId }] }],
  });
  const [created] = o.service.created;
  assert.equal(String(created?.id), posted.id);
  assert.equal(created?.owner, o.service.user, "the owner is who authenticated, not who it claims");
  assert.equal(await o.logbook.find(e.draftId), posted.id);
  assert.equal(await o.logbook.find(crypto.randomUUID()), undefined);
  assert.ok(
    o.http.requests.some((r) => r.startsWith("/Olog/logs/search?properties=AccelAgent.draft.")),
  );
});

Deno.test("attachments go as multipart: logEntry listing them, and the files in the same order", async () => {
  await using o = olog();
  const bytes = (s: string) => new TextEncoder().encode(s);
  await o.logbook.post(entry({
    attachments: [
      { name: "scan-1.csv", contentType: "text/csv", bytes: bytes("time,x\n1,2\n") },
      { name: "plot.svg", contentType: "image/svg+xml", bytes: bytes("<svg/>") },
    ],
  }));
  const [got] = o.service.received;
  assert.equal(got?.path, "/Olog/logs/multipart?markup=commonmark");
  assert.match(got?.contentType ?? "", /^multipart\/form-data/);
  assert.deepEqual(
    (got?.entry.attachments as { filename: string }[]).map((a) => a.filename),
    ["scan-1.csv", "plot.svg"],
  );
  assert.deepEqual(got?.files.map((f) => [f.name, f.type, f.text]), [
    ["scan-1.csv", "text/csv", "time,x\n1,2\n"],
    ["plot.svg", "image/svg+xml", "<svg/>"],
  ]);
  assert.equal((o.service.created[0]?.attachments as unknown[]).length, 2);
});

Deno.test("without credentials nothing is sent; wrong ones are refused naming the variables", async () => {
  {
    await using o = olog({ credentials: "none" });
    await assert.rejects(
      () => o.logbook.post(entry()),
      /takes entries only with credentials: set \[epics\] username_env and password_env/,
    );
    assert.deepEqual(o.http.requests, []);
  }
  await using o = olog({ credentials: "wrong" });
  await assert.rejects(
    () => o.logbook.post(entry()),
    /refused the entry \(HTTP 401: Unauthorized\); check the credentials in the variables \[epics\] username_env and password_env name/,
  );
  assert.equal(o.service.created.length, 0);
});

Deno.test("a hostile Olog: a 500 page, a redirect, a reply without an id, a giant reply, a slow answer", async () => {
  await using o = olog({ timeoutMs: 2000 });
  o.http.faults.fail500 = true;
  await assert.rejects(() => o.logbook.post(entry()), (e: Error) => {
    assert.ok(!(e instanceof UncertainPostError));
    assert.match(
      e.message,
      /^Olog at http:\/\/127\.0\.0\.1:\d+\/Olog refused the entry \(HTTP 500 with an HTML page\)$/,
    );
    return true;
  });
  o.http.faults.fail500 = false;

  await using elsewhere = new FakeHttp(() => new Response("stolen"));
  o.service.faults.redirectTo = `${elsewhere.origin}/steal`;
  await assert.rejects(
    () => o.logbook.post(entry()),
    /answered HTTP 307 \(a redirect to http:\/\/127\.0\.0\.1:\d+\/steal\), which is not followed; check \[epics\] olog_url/,
  );
  assert.deepEqual(elsewhere.requests, [], "credentials go nowhere else");
  delete o.service.faults.redirectTo;

  o.http.faults.respond = (url) =>
    url.pathname === "/Olog/logs" ? Response.json({ ok: true }) : undefined;
  await assert.rejects(
    () => o.logbook.post(entry()),
    (e: Error) => e instanceof UncertainPostError && /without the new entry's id/.test(e.message),
  );

  const endless = new EndlessBody('{"id":1,"x":"' + "y".repeat(8192), "");
  o.http.faults.respond = (url) => url.pathname === "/Olog/logs" ? endless.response() : undefined;
  await assert.rejects(() => o.logbook.post(entry()), (e: Error) => {
    assert.ok(e instanceof UncertainPostError, e.message);
    assert.match(
      e.message,
      /reply could not be read \(.*\[epics\] olog_max_bytes.*\); it may have taken the entry/,
    );
    return true;
  });
  assert.ok(endless.sent < 32 * 1024 * 1024, `the server pushed ${endless.sent} bytes`);
  delete o.http.faults.respond;

  o.http.faults.latencyMs = 20_000;
  await assert.rejects(() => o.logbook.post(entry()), (e: Error) => {
    assert.ok(e instanceof UncertainPostError);
    assert.match(e.message, /did not answer within 2000 ms; it may have taken the entry/);
    return true;
  });
});

Deno.test("find counts only an entry carrying exactly this draft's property, whatever the search returns", async () => {
  await using o = olog();
  const id = crypto.randomUUID();
  const decoys = [
    {
      id: 1,
      properties: [{ name: "AccelAgent", attributes: [{ name: "draft", value: `${id}x` }] }],
    },
    { id: 2, properties: [{ name: "Other", attributes: [{ name: "draft", value: id }] }] },
    { id: 3, properties: [{ name: "AccelAgent", attributes: [{ name: "run", value: id }] }] },
    { id: 4 },
  ];
  // An Olog that ignores the property filter answers with whatever it holds.
  o.http.faults.respond = () => Response.json({ hitCount: 4, logs: decoys });
  assert.equal(await o.logbook.find(id), undefined);
  o.http.faults.respond = () =>
    Response.json([...decoys, {
      id: 5,
      properties: [{ name: "AccelAgent", attributes: [{ name: "draft", value: id }] }],
    }]);
  assert.equal(await o.logbook.find(id), "5");
  o.http.faults.respond = () =>
    new Response("<html>", { headers: { "content-type": "text/html" } });
  await assert.rejects(() => o.logbook.find(id), /answered the search with no JSON/);
});
