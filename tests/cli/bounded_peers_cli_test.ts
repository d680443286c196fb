/**
 * Misbehaving services and models, met the way an operator meets them: the
 * program run through the launcher with a user's grants, on a fake EPICS
 * facility and a scripted model on loopback, asserting what is printed, the
 * exit code, and how much the peer managed to push.
 */
import assert from "node:assert/strict";
import { EndlessBody } from "../support/facility/fake_http.ts";
import { type Respond, type Scenario, startScriptedLlm } from "../support/scripted_llm.ts";
import { UserSetup } from "../support/user_grants.ts";
import { dataBlockBody } from "../support/data_block.ts";

const MiB = 1024 * 1024;

function channels(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    name: `SR:C${String(i).padStart(6, "0")}:X`,
    properties: [
      { name: "recordType", value: "ai" },
      { name: "recordDesc", value: "a channel of a service that ignores ~size" },
    ],
  }));
}

/** A ChannelFinder that sends every one of `n` channels whatever page was asked for. */
function ignorePageSize(setup: UserSetup, n: number): void {
  const body = JSON.stringify(channels(n));
  setup.epics.channelfinder.faults.respond = (url) =>
    url.pathname.endsWith("/count") ? new Response(String(n)) : new Response(body);
}

Deno.test("search --limit 10 on a ChannelFinder that ignores the page size prints 10 and says the service sent more", async () => {
  await using user = await UserSetup.start();
  ignorePageSize(user, 20_000);
  const r = await user.run(["search", "SR:*", "--limit", "10"]);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.split("\n").filter((l) => /SR:C\d{6}:X/.test(l));
  assert.equal(rows.length, 10);
  assert.match(r.stdout, /1–10 of 20000/);
  assert.match(
    r.stderr,
    /ChannelFinder at http:\/\/127\.0\.0\.1:\d+\S* sent more than the 10 channels asked for \(it ignored ~size\); the first 10 are shown/,
  );
  const json = await user.run(["search", "SR:*", "--limit", "10", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const out = JSON.parse(json.stdout);
  assert.equal(out.devices.length, 10);
  assert.match(out.note, /sent more than the 10 channels asked for/);
});

Deno.test("search --limit 10 on a ChannelFinder streaming channels without end prints 10", async () => {
  await using user = await UserSetup.start();
  const flood = new EndlessBody();
  user.epics.channelfinder.faults.respond = (url) =>
    url.pathname.endsWith("/count") ? new Response("1000000") : flood.response();
  const r = await user.run(["search", "X:*", "--limit", "10"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split("\n").filter((l) => l.includes("X:Y:Z")).length, 10);
  assert.match(r.stdout, /1–10 of 1000000/);
  assert.match(r.stderr, /sent more than the 10 channels asked for/);
  assert.ok(flood.sent < 32 * MiB, `${(flood.sent / MiB).toFixed(0)} MiB pushed`);
});

Deno.test("an endless ChannelFinder body ends search at the default 16 MiB cap with a one-line error", async () => {
  await using user = await UserSetup.start();
  const flood = new EndlessBody("a".repeat(4096), '[{"name":"');
  user.epics.channelfinder.faults.respond = () => flood.response();
  const r = await user.run(["search", "SR:*", "--limit", "10"]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(
    r.stderr.trim(),
    /^accel-agent: .*ChannelFinder at http:\/\/127\.0\.0\.1:\d+\/ChannelFinder\/resources\/channels: the response exceeded 16 MiB \(\[epics\] channelfinder_max_bytes\); .*raise the limit$/,
  );
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.ok(flood.sent < 16 * MiB + 32 * MiB, `${(flood.sent / MiB).toFixed(0)} MiB pushed`);
});

Deno.test("an archiver body past [epics] archiver_max_bytes fails that series and names the key", async () => {
  await using user = await UserSetup.start({ epicsConfig: { archiver_max_bytes: 1 * MiB } });
  const flood = new EndlessBody();
  user.epics.archiver.faults.respond = () => flood.response();
  const r = await user.run(["logs", "archive", "--device", "SR:DCCT:CURRENT", "--from", "-1h"]);
  // The exit code of a `logs` whose every series failed is another change's to set.
  assert.match(
    r.stdout,
    /SR:DCCT:CURRENT.*archiver at http:\/\/127\.0\.0\.1:\d+\/retrieval\/data\/getData\.json: the response exceeded 1 MiB \(\[epics\] archiver_max_bytes\)/,
  );
  assert.ok(flood.sent < 1 * MiB + 32 * MiB);
});

Deno.test("a pvws message past the frame cap fails the read with a message saying so", async () => {
  await using user = await UserSetup.start({ epicsConfig: { pvws_max_frame_bytes: 256 * 1024 } });
  const pv = user.epics.pvws.pvs.get("SR:DCCT:CURRENT");
  assert.ok(pv);
  pv.description = "x".repeat(1 * MiB);
  const r = await user.run(["get", "SR:DCCT:CURRENT"]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /SR:DCCT:CURRENT: pvws gateway at ws:\/\/127\.0\.0\.1:\d+\/pvws\/pv sent a 1\.0 MiB message, over the 0\.3 MiB limit \(\[epics\] pvws_max_frame_bytes\)/,
  );
});

async function ask(user: UserSetup, scenario: Scenario) {
  await using llm = await startScriptedLlm({ scenario });
  const r = await user.run(["ask", "--json", "How many SR channels are there?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" },
  });
  return { r, bytes: llm.endlessBytes, requests: llm.requests.length };
}

Deno.test("ask --json carries the excerpt the model read, not the whole tool result, and saves the whole", async () => {
  await using user = await UserSetup.start();
  ignorePageSize(user, 50_000);
  const search = { name: "search_device", arguments: { pattern: "SR:*", limit: 200 } };
  const { r } = await ask(user, {
    turns: [{ respond: { toolCalls: [search] } }, { respond: { text: "Many." } }],
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.ok(r.stdout.length < 100_000, `${r.stdout.length} characters of JSON`);
  const result = out.tool_calls[0].result;
  assert.equal(result.total, 50_000);
  assert.match(result.note, /sent more than the 200 channels asked for/);
  assert.match(result.excerpt, /characters cut; ask for less/);
  // The whole is kept in the session's directory, named by the call.
  const path: string = result.truncated.full_output;
  const call = out.tool_calls[0].id;
  assert.match(
    path,
    new RegExp(`^${user.stateDir}/sessions/[0-9a-f-]{36}/tool-results/${call}\\.txt$`),
  );
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  const whole = JSON.parse(await Deno.readTextFile(path));
  assert.equal(whole.devices.length, 200, "the page was cut to what was asked for");
  assert.equal(result.truncated.chars, JSON.stringify(whole).length);
});

Deno.test("ask --stream-json tool_end events carry the same excerpt, not the whole result", async () => {
  await using user = await UserSetup.start();
  ignorePageSize(user, 50_000);
  const search = { name: "search_device", arguments: { pattern: "SR:*", limit: 200 } };
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { toolCalls: [search] } }, { respond: { text: "Many." } }] },
  });
  const r = await user.run(["ask", "--stream-json", "How many SR channels?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" },
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const end = lines.find((e) => e.type === "tool_end");
  assert.ok(end, r.stdout.slice(0, 500));
  assert.ok(JSON.stringify(end).length < 30_000, `${JSON.stringify(end).length} characters`);
  assert.match(end.result.excerpt, /characters cut; ask for less/);
  assert.equal(end.result.truncated.chars > 20_000, true);
  // What the model was given is that excerpt (in its data block), then where the whole is.
  const content = String(llm.requests[1]?.body.messages.at(-1)?.content);
  const note =
    `\n[the result was cut for you; its whole text (${end.result.truncated.chars} characters) is in ${end.fullOutput}]`;
  assert.ok(content.endsWith(note), content.slice(-300));
  assert.equal(dataBlockBody(content.slice(0, -note.length)), end.result.excerpt);
  assert.equal(
    end.result.truncated.full_output,
    null,
    "the event's stand-in is as the tool made it",
  );
  assert.ok(end.fullOutput.endsWith(`/tool-results/${end.id}.txt`), end.fullOutput);
});

const failedAsk = async (respond: Respond, config: string) => {
  await using user = await UserSetup.start({ extra: config });
  const { r, bytes, requests } = await ask(user, { turns: [{ respond }] });
  const out = JSON.parse(r.stdout);
  return { r, out, bytes, requests };
};

Deno.test("ask --json on a model that trickles tokens ends at the turn deadline and says so", async () => {
  const { r, out } = await failedAsk(
    { fault: "trickle", delayMs: 100 },
    "[llm]\nturn_timeout_s = 2\n",
  );
  assert.equal(r.code, 1);
  assert.equal(out.ok, false);
  assert.equal(out.error.kind, "turn_deadline");
  assert.match(out.error.message, /the turn passed its 2 s deadline \(\[llm\] turn_timeout_s\)/);
});

Deno.test("ask --json on a model that floods text stops at max_response_bytes and says so", async () => {
  const { r, out, bytes, requests } = await failedAsk(
    { fault: "flood" },
    "[llm]\nmax_response_bytes = 1048576\n",
  );
  assert.equal(r.code, 1);
  assert.equal(out.error.kind, "too_large");
  assert.match(out.error.message, /model response passed 1 MiB \(\[llm\] max_response_bytes\)/);
  assert.equal(requests, 1, "not asked again");
  assert.ok(bytes < 1 * MiB + 32 * MiB, `${(bytes / MiB).toFixed(0)} MiB pushed`);
  assert.ok(r.stdout.length < 1.5 * MiB, "no more of the flood than the cap reaches the JSON");
});
