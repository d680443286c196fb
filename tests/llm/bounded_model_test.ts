/**
 * A model endpoint that floods or trickles cannot hold memory or a turn for
 * ever: one response is capped in bytes, one turn in wall-clock time, and
 * each ends as an error that says which limit it hit.
 */
import assert from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runTurn } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import type { ToolSet } from "../../src/agent/tools.ts";
import { LlmError } from "../../src/llm/errors.ts";
import { createOpenAiClient, type OpenAiClientOptions } from "../../src/llm/openai_client.ts";
import type { ModelEvent } from "../../src/llm/types.ts";
import { type Respond, startScriptedLlm } from "../support/scripted_llm.ts";

const MiB = 1024 * 1024;

function client(url: string, extra: Partial<OpenAiClientOptions> = {}) {
  return createOpenAiClient({
    name: "main",
    model: "scripted",
    baseUrl: url,
    apiKey: "test",
    stream: true,
    retry: { maxRetries: 3, baseMs: 10, maxMs: 200 },
    requestTimeoutMs: 30_000,
    idleTimeoutMs: 30_000,
    random: () => 0.5,
    ...extra,
  });
}

const NO_TOOLS: ToolSet = {
  specs: () => [],
  isReadOnly: () => true,
  previewArgs: (_n, raw) => raw,
  awaitsCompletion: () => false,
  execute: () => Promise.reject(new Error("no tools here")),
};

async function complete(url: string, extra: Partial<OpenAiClientOptions>) {
  const events: ModelEvent[] = [];
  let error: unknown;
  try {
    const request = { messages: [{ role: "user" as const, content: "status?" }], tools: [] };
    for await (const ev of client(url, extra).complete(request, new AbortController().signal)) {
      events.push(ev);
    }
  } catch (e) {
    error = e;
  }
  return { events, error };
}

Deno.test("a flooding model stream is cut at max_response_bytes, reported as too large and not retried", async () => {
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { fault: "flood" } }] },
  });
  const { error } = await complete(llm.url, { maxResponseBytes: 1 * MiB });
  assert.ok(error instanceof LlmError, String(error));
  assert.equal(error.kind, "too_large");
  assert.equal(error.retryable, false);
  assert.match(
    error.message,
    /^model response passed 1 MiB \(\[llm\] max_response_bytes\) and was cut off; .*raise the limit$/,
  );
  assert.equal(llm.requests.length, 1, "a flood is not asked for again");
  // Reading stopped at the cap: the server could push no further than socket buffers hold.
  assert.ok(llm.endlessBytes < 1 * MiB + 16 * MiB, `${(llm.endlessBytes / MiB).toFixed(1)} MiB`);
});

Deno.test("a non-streamed answer longer than max_response_bytes is refused the same way", async () => {
  const text = "b".repeat(300_000);
  await using llm = await startScriptedLlm({ scenario: { turns: [{ respond: { text } }] } });
  const { error } = await complete(llm.url, { stream: false, maxResponseBytes: 64 * 1024 });
  assert.ok(error instanceof LlmError, String(error));
  assert.equal(error.kind, "too_large");
});

Deno.test("an answer under max_response_bytes arrives whole", async () => {
  const text = "c".repeat(100_000);
  await using llm = await startScriptedLlm({
    scenario: { turns: [{ respond: { text, chunkSize: 4096 } }] },
  });
  const { events, error } = await complete(llm.url, { maxResponseBytes: 1 * MiB });
  assert.equal(error, undefined);
  const done = events.find((e) => e.type === "done");
  assert.equal(done?.type === "done" ? done.response.text : "", text);
});

async function turn(respond: Respond[], deadlineMs: number, session = new Session("s", 0)) {
  await using llm = await startScriptedLlm({
    scenario: { turns: respond.map((r) => ({ respond: r })) },
  });
  const events: AgentEvent[] = [];
  for await (
    const ev of runTurn({
      session,
      input: "status?",
      model: client(llm.url),
      tools: NO_TOOLS,
      systemPrompt: "sys",
      maxIterations: 5,
      signal: new AbortController().signal,
      deadline: { ms: deadlineMs, key: "[llm] turn_timeout_s" },
    })
  ) events.push(ev);
  return { events, session, bytes: llm.endlessBytes };
}

Deno.test("a model trickling a token at a time never idles out, yet the turn ends at its deadline", async () => {
  // Each token comes well inside the idle timeout: only the turn deadline can end this.
  const { events, session } = await turn([{ fault: "trickle", delayMs: 50 }], 1_000);
  const last = events.at(-1);
  assert.equal(last?.type, "error");
  assert.ok(last?.type === "error");
  assert.equal(last.kind, "turn_deadline");
  assert.equal(last.retryable, false);
  assert.match(
    last.message,
    /^the turn passed its 1 s deadline \(\[llm\] turn_timeout_s\): the model was still answering/,
  );
  assert.ok(events.some((e) => e.type === "text"), "tokens did arrive before the deadline");
  // The session keeps the question and nothing half-said, so the next turn can go on.
  assert.deepEqual(session.messages.map((m) => m.role), ["user"]);
  const next = await turn([{ text: "All nominal." }], 10_000, session);
  assert.equal(next.events.at(-1)?.type, "turn_complete");
  assert.deepEqual(session.messages.map((m) => m.role), ["user", "user", "assistant"]);
});

Deno.test("a model error inside a turn carries its kind on the error event", async () => {
  const { events } = await turn([{ fault: "bad_request" }], 10_000);
  const last = events.at(-1);
  assert.ok(last?.type === "error", JSON.stringify(last));
  assert.equal(last.kind, "bad_request");
});
