import assert from "node:assert/strict";
import OpenAI from "openai";
import { type Respond, startScriptedLlm } from "./scripted_llm.ts";
import { waitFor } from "./run_agent.ts";
import { addChunk, type Assembled, clientFor, rejection } from "./scripted_llm_testing.ts";

/**
 * `p`, or a failure naming `what` if it has not settled after 60 s: a ceiling
 * for a wait that only the behaviour under test can end (not a measure).
 */
async function ended<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within 60 s`)), 60_000);
  });
  try {
    return await Promise.race([p, ceiling]);
  } finally {
    clearTimeout(timer);
  }
}

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "status?" }];

function oneTurn(respond: Respond) {
  return startScriptedLlm({ scenario: { turns: [{ respond }] } });
}

function streamFrom(llm: { url: string }, signal?: AbortSignal) {
  return clientFor(llm.url).chat.completions.create(
    { model: "m", messages, stream: true },
    signal ? { signal } : {},
  );
}

Deno.test("rate_limit surfaces as RateLimitError with Retry-After readable", async () => {
  await using llm = await oneTurn({ fault: "rate_limit", retryAfter: 7, retryAfterMs: 6500 });
  const error = await rejection(streamFrom(llm));

  assert.ok(error instanceof OpenAI.RateLimitError, String(error));
  assert.equal(error.status, 429);
  assert.equal(error.headers.get("retry-after"), "7");
  assert.equal(error.headers.get("retry-after-ms"), "6500");
  assert.equal(error.code, "rate_limit_exceeded");
  assert.equal(error.type, "requests");
  assert.equal(error.requestID, "req_chatcmpl-scripted-1");
  assert.deepEqual(llm.failures, []);
});

Deno.test("server_error and bad_request map to the SDK's status error classes", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { fault: "server_error" } },
        { respond: { fault: "server_error", status: 503 } },
        { respond: { fault: "bad_request" } },
        { respond: { fault: "bad_request", status: 422 } },
      ],
    },
  });
  const errors = [];
  for (let i = 0; i < 4; i++) errors.push(await rejection(streamFrom(llm)));
  const [e500, e503, e400, e422] = errors;

  assert.ok(e500 instanceof OpenAI.InternalServerError && e500.status === 500, String(e500));
  assert.ok(e503 instanceof OpenAI.InternalServerError && e503.status === 503, String(e503));
  assert.ok(e400 instanceof OpenAI.BadRequestError, String(e400));
  assert.equal(e400.type, "invalid_request_error");
  assert.ok(e422 instanceof OpenAI.UnprocessableEntityError, String(e422));
  assert.equal(llm.remaining(), 0);
});

Deno.test("a stall is ended by the client's AbortSignal and the server closes", async () => {
  const llm = await oneTurn({ fault: "stall", afterText: "Reading the" });
  const controller = new AbortController();
  const stream = await streamFrom(llm, controller.signal);
  const said: Assembled = { text: "", toolCalls: [], finishReason: null, chunks: [] };
  let aborting = false;
  let outcome: unknown = "ended";
  // The stall never ends by itself: only the abort can end the iteration.
  await ended(
    (async () => {
      try {
        for await (const chunk of stream) {
          addChunk(said, chunk);
          if (said.text === "Reading the" && !aborting) {
            aborting = true;
            setTimeout(() => controller.abort(), 20);
          }
        }
      } catch (error) {
        outcome = error;
      }
    })(),
    "the aborted stream",
  );

  // openai@7 ends the iteration quietly (no APIUserAbortError) when the caller
  // aborts mid-stream, so callers must look at `signal.aborted` after the loop.
  assert.equal(outcome, "ended");
  assert.equal(aborting, true);
  assert.equal(said.finishReason, null);
  await llm.close();
  assert.deepEqual(llm.failures, []);
});

Deno.test("close() ends a stall the client still reads, which then sees a broken stream", async () => {
  const llm = await oneTurn({ fault: "stall" });
  const stream = await streamFrom(llm);
  const reading = rejection((async () => {
    for await (const _ of stream) { /* nothing arrives */ }
  })());
  await llm.close();
  // The stall never ends by itself: only the close can end the read.
  const error = await ended(reading, "the read of the closed stall");

  assert.ok(error instanceof TypeError, String(error));
});

Deno.test("a cut connection makes the stream iteration throw mid tool call", async () => {
  const args = JSON.stringify({ pv: "SR:DCCT", value: 401.25, comment: "x".repeat(40) });
  await using llm = await oneTurn({
    fault: "cut",
    toolCall: { name: "write_pv", arguments: args },
    cutAfterChars: 20,
  });
  const stream = await streamFrom(llm);
  const said: Assembled = { text: "", toolCalls: [], finishReason: null, chunks: [] };
  const error = await rejection((async () => {
    for await (const chunk of stream) addChunk(said, chunk);
  })());

  // A dropped body is not an APIError: the SDK rethrows fetch's TypeError as is.
  assert.ok(error instanceof TypeError, String(error));
  assert.ok(!(error instanceof OpenAI.APIError));
  assert.deepEqual(said.toolCalls, [{
    id: "call_1",
    name: "write_pv",
    arguments: args.slice(0, 20),
  }]);
  assert.equal(said.finishReason, null);
  assert.deepEqual(llm.failures, []);
});

Deno.test("delay holds the response back, then answers; close() cuts a pending delay short", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { fault: "delay", ms: 60, then: { text: "late but fine" } } },
        { respond: { fault: "delay", ms: 60_000, then: { text: "never" } } },
      ],
    },
  });
  const client = clientFor(llm.url);
  const started = performance.now();
  const first = await client.chat.completions.create({ model: "m", messages });
  assert.equal(first.choices[0]?.message.content, "late but fine");
  assert.ok(performance.now() - started >= 55);

  const pending = rejection(client.chat.completions.create({ model: "m", messages }));
  await waitFor(() => llm.requests.length === 2, 60_000, "the second request");
  await llm.close();
  // A minute's delay: only the close can end the request (with a 503) within the ceiling.
  const error = await ended(pending, "the delayed request");
  assert.ok(error instanceof OpenAI.InternalServerError && error.status === 503, String(error));
});

Deno.test("an abort while a delayed request waits for headers raises APIUserAbortError", async () => {
  await using llm = await oneTurn({ fault: "delay", ms: 30_000, then: { text: "never" } });
  const error = await rejection(streamFrom(llm, AbortSignal.timeout(50)));
  assert.ok(error instanceof OpenAI.APIUserAbortError, String(error));
});

Deno.test("chunkDelayMs paces the stream and close() cuts it", async () => {
  const llm = await oneTurn({ text: "abcdefghij", chunkSize: 1, chunkDelayMs: 40 });
  const stream = await streamFrom(llm);
  const said: Assembled = { text: "", toolCalls: [], finishReason: null, chunks: [] };
  const reading = rejection((async () => {
    for await (const chunk of stream) addChunk(said, chunk);
  })());
  await new Promise((resolve) => setTimeout(resolve, 100));
  await llm.close();
  const error = await reading;
  assert.ok(error instanceof TypeError, String(error));
  assert.ok(said.text.length >= 1 && said.text.length < 10, said.text);
});

Deno.test("truncate streams its text, then closes cleanly with no finish reason and, unless asked, no [DONE]", async () => {
  for (const done of [false, true]) {
    const respond: Respond = { fault: "truncate", afterText: "Safe to proceed: do NOT", done };
    await using llm = await startScriptedLlm({ scenario: { turns: [{ respond }, { respond }] } });
    const res = await fetch(`${llm.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages, stream: true }),
    });
    const body = await res.text();
    assert.equal(body.includes("data: [DONE]"), done);
    const said: Assembled = { text: "", toolCalls: [], finishReason: null, chunks: [] };
    for await (const chunk of await streamFrom(llm)) addChunk(said, chunk);
    assert.equal(said.text, "Safe to proceed: do NOT");
    assert.equal(said.finishReason, null, "the SDK ends quietly: the client must notice");
    assert.deepEqual(llm.failures, []);
  }
});
