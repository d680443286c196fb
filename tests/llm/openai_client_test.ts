import assert from "node:assert/strict";
import { LlmError } from "../../src/llm/errors.ts";
import { createOpenAiClient, type OpenAiClientOptions } from "../../src/llm/openai_client.ts";
import type { ModelEvent, ModelRequest, ModelResponse } from "../../src/llm/types.ts";
import { type Scenario, startScriptedLlm } from "../support/scripted_llm.ts";

const REQUEST: ModelRequest = {
  messages: [{ role: "system", content: "sys" }, {
    role: "user",
    content: "What is LINAC:BPM:01:X?",
  }],
  tools: [{
    name: "get_parameter",
    description: "read",
    parameters: { type: "object", properties: {} },
  }],
};

function client(url: string, extra: Partial<OpenAiClientOptions> = {}) {
  return createOpenAiClient({
    name: "main",
    model: "scripted",
    baseUrl: url,
    apiKey: "test",
    stream: true,
    retry: { maxRetries: 3, baseMs: 10, maxMs: 2_000 },
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 2_000,
    random: () => 0.5,
    ...extra,
  });
}

async function run(
  scenario: Scenario,
  extra: Partial<OpenAiClientOptions> = {},
  signal = new AbortController().signal,
) {
  await using llm = await startScriptedLlm({ scenario });
  const events: ModelEvent[] = [];
  let error: unknown;
  try {
    for await (const ev of client(llm.url, extra).complete(REQUEST, signal)) events.push(ev);
  } catch (e) {
    error = e;
  }
  const done = events.find((e) => e.type === "done") as { response: ModelResponse } | undefined;
  return {
    events,
    error,
    response: done?.response,
    requests: [...llm.requests],
    failures: [...llm.failures],
  };
}

Deno.test("a streamed answer arrives as text deltas and one done event with usage", async () => {
  const { events, response, requests } = await run({
    turns: [{
      respond: {
        text: "Position is 0.12 mm.",
        chunkSize: 4,
        usage: { prompt_tokens: 42, completion_tokens: 7 },
      },
    }],
  });
  assert.equal(events.filter((e) => e.type === "text").length, 5);
  assert.equal(response?.text, "Position is 0.12 mm.");
  assert.deepEqual(response?.usage, { promptTokens: 42, completionTokens: 7, totalTokens: 49 });
  assert.equal(requests[0]?.body.stream, true);
  assert.deepEqual(requests[0]?.body.stream_options, { include_usage: true });
  assert.equal(requests[0]?.body.tools?.[0]?.function?.name, "get_parameter");
});

Deno.test("streamed tool calls are assembled from their deltas with exact arguments", async () => {
  const args = { devices: ["LINAC:BPM:01:X", "RF:PHASE:SETPT"] };
  const { response } = await run({
    turns: [{
      respond: {
        toolCalls: [{ id: "c1", name: "get_parameter", arguments: args }, {
          name: "search_device",
          arguments: '{"pattern":"RING:*"}',
        }],
        chunkSize: 3,
      },
    }],
  });
  assert.equal(response?.finishReason, "tool_calls");
  assert.deepEqual(response?.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]), [
    ["get_parameter", args],
    ["search_device", { pattern: "RING:*" }],
  ]);
  assert.equal(response?.toolCalls[0]?.id, "c1");
});

Deno.test("429 is retried after the server's Retry-After", async () => {
  const { events, response } = await run({
    turns: [{ respond: { fault: "rate_limit", retryAfterMs: 120 } }, { respond: { text: "ok" } }],
  });
  const retry = events.find((e) => e.type === "retry") as Extract<ModelEvent, { type: "retry" }>;
  assert.equal(retry.delayMs, 120);
  assert.match(retry.reason, /429/);
  assert.equal(response?.text, "ok");
});

Deno.test("Retry-After in seconds is honoured too", async () => {
  const { events } = await run({
    turns: [{ respond: { fault: "rate_limit", retryAfter: 1 } }, { respond: { text: "ok" } }],
  });
  assert.equal((events[0] as { delayMs: number }).delayMs, 1000);
});

Deno.test("5xx is retried with exponential backoff until the retry budget is spent", async () => {
  const { events, error, requests } = await run(
    { turns: [0, 1, 2].map(() => ({ respond: { fault: "server_error" as const, status: 503 } })) },
    { retry: { maxRetries: 2, baseMs: 40, maxMs: 1_000 } },
  );
  assert.equal(requests.length, 3, "one call and two retries");
  assert.deepEqual(events.map((e) => e.type === "retry" ? e.delayMs : e.type), [20, 40]);
  assert.ok(error instanceof LlmError);
  assert.equal(error.kind, "server");
  assert.equal(error.status, 503);
});

Deno.test("a stalled stream times out on silence and is retried", async () => {
  const { events, response } = await run(
    {
      turns: [{ respond: { fault: "stall", afterText: "Posi" } }, {
        respond: { text: "Position is fine." },
      }],
    },
    { idleTimeoutMs: 150 },
  );
  const retry = events.find((e) => e.type === "retry") as Extract<ModelEvent, { type: "retry" }>;
  assert.match(retry.reason, /stalled: no data for 0.15 s/);
  assert.equal(retry.discardedText, true, "the partial text is declared void");
  assert.equal(response?.text, "Position is fine.");
});

Deno.test("a stream cut mid-tool-call is retried and the retry's tool call is whole", async () => {
  const { events, response } = await run({
    turns: [
      {
        respond: {
          fault: "cut",
          toolCall: { name: "get_parameter", arguments: { devices: ["LINAC:BPM:01:X"] } },
        },
      },
      {
        respond: {
          toolCalls: [{ name: "get_parameter", arguments: { devices: ["LINAC:BPM:01:X"] } }],
        },
      },
    ],
  });
  assert.equal(events.filter((e) => e.type === "retry").length, 1);
  assert.deepEqual(JSON.parse(response?.toolCalls[0]?.arguments ?? ""), {
    devices: ["LINAC:BPM:01:X"],
  });
});

Deno.test("aborting a stalled stream rejects at once as aborted, without retrying", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const started = performance.now();
  const { error, requests } = await run(
    { turns: [{ respond: { fault: "stall" } }] },
    {},
    controller.signal,
  );
  assert.ok(performance.now() - started < 1_000);
  assert.ok(error instanceof LlmError);
  assert.equal(error.kind, "aborted");
  assert.equal(requests.length, 1);
});

Deno.test("an endpoint that refuses to stream tools is asked again without streaming, and remembered", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { fault: "bad_request", status: 400 } },
        {
          expect: { stream: false },
          respond: { toolCalls: [{ name: "get_parameter", arguments: { devices: ["A"] } }] },
        },
        { expect: { stream: false }, respond: { text: "second call" } },
      ],
    },
  });
  const c = client(llm.url);
  const collect = async () => {
    let r: ModelResponse | undefined;
    for await (const ev of c.complete(REQUEST, new AbortController().signal)) {
      if (ev.type === "done") r = ev.response;
    }
    return r;
  };
  assert.equal((await collect())?.toolCalls[0]?.name, "get_parameter");
  assert.equal((await collect())?.text, "second call");
  assert.deepEqual(llm.failures, []);
});

Deno.test("a 400 without tools is not retried: it is the request that is wrong", async () => {
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { fault: "bad_request", status: 422 } }] },
  });
  const err = await assert.rejects(
    async () => {
      for await (
        const _ of client(llm.url).complete({ ...REQUEST, tools: [] }, new AbortController().signal)
      ) { /* drain */ }
    },
    (e: unknown) =>
      e instanceof LlmError && e.kind === "bad_request" && e.status === 422 && !e.retryable,
  );
  void err;
});

Deno.test("an unreachable endpoint is a connection error after the retries", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const events: ModelEvent[] = [];
  await assert.rejects(
    async () => {
      for await (
        const ev of client(`http://127.0.0.1:${port}/v1`, {
          retry: { maxRetries: 1, baseMs: 5, maxMs: 10 },
        })
          .complete(REQUEST, new AbortController().signal)
      ) events.push(ev);
    },
    (e: unknown) =>
      e instanceof LlmError && e.kind === "connection" &&
      /cannot reach the model endpoint/.test(e.message),
  );
  assert.equal(events.filter((e) => e.type === "retry").length, 1);
});

Deno.test("non-streaming mode returns the same response shape", async () => {
  const { response, events, requests } = await run(
    { turns: [{ respond: { text: "plain", usage: { prompt_tokens: 3, completion_tokens: 1 } } }] },
    { stream: false },
  );
  assert.equal(requests[0]?.body.stream, false);
  assert.deepEqual(events[0], { type: "text", delta: "plain" });
  assert.equal(response?.usage.totalTokens, 4);
});

Deno.test("token counts an endpoint reports that are not whole counts are replaced by the estimate, streamed or not", async () => {
  for (const stream of [true, false]) {
    for (
      const usage of [
        { prompt_tokens: -1_000_000, completion_tokens: 5 },
        { prompt_tokens: 10, completion_tokens: "lots" as unknown as number },
        { prompt_tokens: 1.5, completion_tokens: 2 },
        { prompt_tokens: 1e300, completion_tokens: 2 },
      ]
    ) {
      const { response } = await run(
        { turns: [{ respond: { text: "301 mA", usage } }] },
        { stream },
      );
      const u = response?.usage;
      const what = `${stream ? "streamed" : "whole"} ${JSON.stringify(usage)}: ${
        JSON.stringify(u)
      }`;
      for (const n of [u?.promptTokens, u?.completionTokens, u?.totalTokens]) {
        assert.ok(Number.isSafeInteger(n) && (n as number) >= 0, what);
      }
      assert.equal(u?.totalTokens, (u?.promptTokens ?? 0) + (u?.completionTokens ?? 0), what);
      // The estimate: about four characters a token of what was sent and received.
      assert.ok((u?.promptTokens ?? 0) > 0 && (u?.promptTokens ?? 0) < 1000, what);
    }
  }
});
