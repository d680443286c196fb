/**
 * Retries wait with "full jitter" (AWS): a uniformly random delay in
 * [0, min(cap, base·2^n)], unless the server said how long; and the waits run
 * on injected timers, so these tests take simulated minutes, not real ones.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import { LlmError } from "../../src/llm/errors.ts";
import { createOpenAiClient } from "../../src/llm/openai_client.ts";
import { backoffMs } from "../../src/llm/retry.ts";
import type { ModelEvent } from "../../src/llm/types.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const POLICY = { maxRetries: 5, baseMs: 100, maxMs: 1_000 };
const BUSY = new LlmError("server", "model endpoint answered 503", { status: 503 });

Deno.test("a retry's delay is drawn from zero up to the exponential ceiling, not its upper half", () => {
  // attempt 1: ceiling 100; attempt 3: 400; attempt 5: 1600 capped to 1000.
  assert.equal(backoffMs(POLICY, 1, BUSY, () => 0), 0);
  assert.equal(backoffMs(POLICY, 1, BUSY, () => 0.25), 25);
  assert.equal(backoffMs(POLICY, 3, BUSY, () => 0.25), 100);
  assert.equal(backoffMs(POLICY, 3, BUSY, () => 0.999), 400);
  assert.equal(backoffMs(POLICY, 5, BUSY, () => 0.5), 500);
  assert.equal(backoffMs(POLICY, 9, BUSY, () => 0.999), 999);
});

Deno.test("a delay the server asks for is kept, up to the cap, without jitter", () => {
  const limited = new LlmError("rate_limit", "429", { status: 429, retryAfterMs: 700 });
  assert.equal(backoffMs(POLICY, 1, limited, () => 0), 700);
  const long = new LlmError("rate_limit", "429", { status: 429, retryAfterMs: 60_000 });
  assert.equal(backoffMs(POLICY, 1, long, () => 0), 1_000);
});

Deno.test("retry waits run on the injected timers: minutes of backoff pass on the manual clock", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { fault: "server_error", status: 503 } },
        { respond: { fault: "server_error", status: 502 } },
        { respond: { text: "back" } },
      ],
    },
  });
  const clock = new ManualClock(0);
  const timers = new ClockTimers(clock);
  const client = createOpenAiClient({
    name: "main",
    model: "scripted",
    baseUrl: llm.url,
    apiKey: "test",
    stream: true,
    retry: { maxRetries: 3, baseMs: 120_000, maxMs: 600_000 },
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
    random: () => 0.5,
    timers,
  });
  const events: ModelEvent[] = [];
  for await (
    const ev of client.complete({ messages: [], tools: [] }, new AbortController().signal)
  ) {
    events.push(ev);
  }
  const delays = events.flatMap((e) => e.type === "retry" ? [e.delayMs] : []);
  assert.deepEqual(delays, [60_000, 120_000], "half of 2 and 4 minutes");
  assert.deepEqual(timers.delays, delays);
  assert.equal(clock.now(), 180_000, "the manual clock moved by the waits");
  assert.equal(events.at(-1)?.type, "done");
});

Deno.test("an error event inside a stream is classified by its code: 429 is a rate limit, 503 a server error", async () => {
  for (const [status, kind] of [[429, "rate_limit"], [503, "server"]] as const) {
    await using llm = await startScriptedLlm({
      scenario: { turns: [{ respond: { fault: "reset", afterText: "partial", status } }] },
    });
    const client = createOpenAiClient({
      name: "main",
      model: "scripted",
      baseUrl: llm.url,
      apiKey: "test",
      stream: true,
      retry: { maxRetries: 0, baseMs: 1, maxMs: 1 },
      requestTimeoutMs: 5_000,
      idleTimeoutMs: 5_000,
    });
    const error = await (async () => {
      try {
        for await (
          const _ of client.complete({ messages: [], tools: [] }, new AbortController().signal)
        ) {
          // drain
        }
      } catch (e) {
        return e;
      }
    })();
    assert.ok(error instanceof LlmError, String(error));
    assert.equal(error.kind, kind);
    assert.equal(error.status, status);
    assert.ok(error.retryable);
  }
});
