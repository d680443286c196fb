/**
 * A streamed answer is complete only when the endpoint says why it stopped:
 * a body that closes cleanly without a finish reason was cut short and is
 * an error, retried while the retry budget lasts, never an answer.
 */
import assert from "node:assert/strict";
import { LlmError } from "../../src/llm/errors.ts";
import { createOpenAiClient } from "../../src/llm/openai_client.ts";
import type { ModelEvent, ModelRequest } from "../../src/llm/types.ts";
import { type Scenario, startScriptedLlm } from "../support/scripted_llm.ts";
import { runAgent, tempConfig } from "../support/run_agent.ts";

const REQUEST: ModelRequest = {
  messages: [{ role: "user", content: "Is it safe to raise the RF power?" }],
  tools: [],
};

async function complete(scenario: Scenario, maxRetries: number) {
  await using llm = await startScriptedLlm({ scenario });
  const client = createOpenAiClient({
    name: "main",
    model: "scripted",
    baseUrl: llm.url,
    apiKey: "test",
    stream: true,
    retry: { maxRetries, baseMs: 5, maxMs: 20 },
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 2_000,
    random: () => 0.5,
  });
  const events: ModelEvent[] = [];
  let error: unknown;
  try {
    for await (const ev of client.complete(REQUEST, new AbortController().signal)) events.push(ev);
  } catch (e) {
    error = e;
  }
  return { events, error, requests: llm.requests.length, failures: [...llm.failures] };
}

const CUT = "Safe to proceed: do NOT";

Deno.test("a stream that closes cleanly without a finish reason or [DONE] is an error, not an answer", async () => {
  const { events, error, failures } = await complete(
    { turns: [{ respond: { fault: "truncate", afterText: CUT } }] },
    0,
  );
  assert.deepEqual(failures, []);
  assert.equal(events.some((e) => e.type === "done"), false, "no done event for a cut answer");
  assert.ok(error instanceof LlmError, String(error));
  assert.equal(error.kind, "stream");
  assert.match(error.message, /cut off: the stream ended without a finish reason/);
});

Deno.test("a stream with [DONE] but no finish reason is still a cut answer", async () => {
  const { error } = await complete(
    { turns: [{ respond: { fault: "truncate", afterText: CUT, done: true } }] },
    0,
  );
  assert.ok(error instanceof LlmError, String(error));
  assert.match(error.message, /without a finish reason/);
});

Deno.test("a cut answer is retried, its text declared void, and the retry's whole answer kept", async () => {
  const { events, error, requests } = await complete(
    {
      turns: [
        { respond: { fault: "truncate", afterText: CUT } },
        { respond: { text: "Safe to proceed: do NOT raise it above 80 kW." } },
      ],
    },
    2,
  );
  assert.equal(error, undefined);
  assert.equal(requests, 2);
  const retry = events.find((e) => e.type === "retry");
  assert.equal(retry?.type === "retry" && retry.discardedText, true);
  const done = events.find((e) => e.type === "done");
  assert.equal(
    done?.type === "done" && done.response.text,
    "Safe to proceed: do NOT raise it above 80 kW.",
  );
});

Deno.test("ask --json reports a cut answer as an error with exit 1, never ok", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [0, 1].map(() => ({ respond: { fault: "truncate" as const, afterText: CUT } })),
    },
  });
  await using config = await tempConfig("[llm]\nmax_retries = 1\nretry_base_ms = 5\n");
  const r = await runAgent(["ask", "--json", "--config", config.path, "Is it safe?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(r.code, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, false);
  assert.match(out.error.message, /cut off/);
  assert.equal(llm.requests.length, 2, "retried once, then reported");
});

for (const reason of ["length", "content_filter"]) {
  Deno.test(`an answer stopped with finish reason ${reason} is reported as cut off, exit 1`, async () => {
    await using llm = await startScriptedLlm({
      scenario: { turns: [{ respond: { text: CUT, finishReason: reason } }] },
    });
    const r = await runAgent(["ask", "--json", "Is it safe?"], {
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    });
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.ok, false);
    assert.match(out.error.message, new RegExp(`cut off .*finish reason "${reason}"`));
    assert.equal(llm.requests.length, 1, "a cut at the limit is not retried: it would cut again");
  });
}

Deno.test("a non-streamed completion without a message is an error, not an empty answer", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      Response.json({
        id: "x",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [],
      }),
  );
  const client = createOpenAiClient({
    name: "main",
    model: "m",
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    apiKey: "k",
    stream: false,
    retry: { maxRetries: 0, baseMs: 5, maxMs: 20 },
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 2_000,
  });
  let error: unknown;
  try {
    for await (const _ of client.complete(REQUEST, new AbortController().signal)) { /* drain */ }
  } catch (e) {
    error = e;
  }
  await server.shutdown();
  assert.ok(error instanceof LlmError, String(error));
  assert.match(error.message, /answered a completion without a message/);
});

for (
  const [status, stream, expected] of [
    [
      200,
      true,
      /^model endpoint at http:\S+ answered an HTML page \(status 200\) where an event stream was expected; check \[llm\] base_url$/,
    ],
    [
      200,
      false,
      /^model endpoint at http:\S+ answered an HTML page \(status 200\) where a chat completion was expected; check \[llm\] base_url$/,
    ],
    [502, true, /^model endpoint answered 502: an HTML page$/],
  ] as const
) {
  Deno.test(`a model endpoint answering an HTML page (status ${status}, ${stream ? "streamed" : "whole"}) says so in one line`, async () => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response("<!DOCTYPE html>\n<html><body><h1>Sign in</h1>\n</body></html>", {
          status,
          headers: { "content-type": "text/html" },
        }),
    );
    const client = createOpenAiClient({
      name: "main",
      model: "m",
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
      apiKey: "k",
      stream,
      retry: { maxRetries: 0, baseMs: 5, maxMs: 20 },
      requestTimeoutMs: 5_000,
      idleTimeoutMs: 2_000,
    });
    let error: unknown;
    try {
      for await (const _ of client.complete(REQUEST, new AbortController().signal)) { /* drain */ }
    } catch (e) {
      error = e;
    }
    await server.shutdown();
    assert.ok(error instanceof LlmError, String(error));
    assert.match(error.message, expected);
  });
}
