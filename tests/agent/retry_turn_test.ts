/**
 * A model call that fails after part of its answer streamed (a connection
 * reset, or a 429/5xx error event mid-stream) is retried within the same
 * turn. The partial message is discarded, not continued: the `retry` event
 * says `discardedText`, the answer is asked for again, and the session and
 * the `--json` answer hold each message once, with the turn's earlier
 * messages kept. Through the real client against the scripted server.
 */
import assert from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runTurn } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import type { ToolOutcome, ToolSet } from "../../src/agent/tools.ts";
import { createOpenAiClient } from "../../src/llm/openai_client.ts";
import { AskResultBuilder } from "../../src/cli/commands/ask_result.ts";
import { ManualClock } from "../../src/adapters/clock.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { type Respond, startScriptedLlm } from "../support/scripted_llm.ts";

/** One read-only tool that answers at once. */
const READ: ToolSet = {
  specs: () => [{ name: "read", description: "reads", parameters: { type: "object" } }],
  isReadOnly: () => true,
  awaitsCompletion: () => false,
  previewArgs: (_n, raw) => JSON.parse(raw),
  execute: (): Promise<ToolOutcome> =>
    Promise.resolve({ ok: true, content: '{"x":0.12}', result: { x: 0.12 }, args: {} }),
};

async function turn(failure: Respond) {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            text: "Reading it. ",
            toolCalls: [{ id: "c1", name: "read", arguments: {} }],
          },
        },
        { respond: failure },
        { respond: { text: "BPM 1 reads 0.12 mm." } },
      ],
    },
  });
  const timers = new ClockTimers(new ManualClock(0));
  const model = createOpenAiClient({
    name: "main",
    model: "scripted",
    baseUrl: llm.url,
    apiKey: "test",
    stream: true,
    retry: { maxRetries: 2, baseMs: 30_000, maxMs: 60_000 },
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
    timers,
  });
  const session = new Session("s", 0);
  const events: AgentEvent[] = [];
  for await (
    const ev of runTurn({
      session,
      input: "What does BPM 1 read?",
      model,
      tools: READ,
      systemPrompt: "system",
      maxIterations: 5,
      signal: new AbortController().signal,
    })
  ) events.push(ev);
  const result = new AskResultBuilder("main", "scripted", 0);
  for (const ev of events) result.add(ev);
  return { events, session, result: result.build(0), requests: llm.requests.length, timers };
}

for (
  const [what, failure] of [
    ["a connection reset", { fault: "reset", afterText: "BPM 1 reads 0.1" }],
    ["a 429 error event", { fault: "reset", afterText: "BPM 1 reads 0.1", status: 429 }],
    ["a 503 error event", { fault: "reset", afterText: "BPM 1 reads 0.1", status: 503 }],
  ] as const
) {
  Deno.test(`${what} after partial output is retried in the same turn, the partial message discarded`, async () => {
    const { events, session, result, requests, timers } = await turn(failure);
    assert.equal(requests, 3, "the failed call was asked again");
    const retry = events.find((e) => e.type === "retry");
    assert.ok(retry?.type === "retry" && retry.discardedText, JSON.stringify(retry));
    assert.equal(timers.delays.length, 1, "the retry waited on the injected timers");
    assert.equal(events.at(-1)?.type, "turn_complete");
    // The void attempt ends no message: each message_end is a message the session keeps.
    const ends = events.flatMap((e) => e.type === "message_end" ? [e.text] : []);
    assert.deepEqual(ends, ["Reading it. ", "BPM 1 reads 0.12 mm."]);
    const said = session.messages.flatMap((m) => m.role === "assistant" ? [m.content] : []);
    assert.deepEqual(said, ["Reading it. ", "BPM 1 reads 0.12 mm."]);
    assert.equal(session.turns, 1);
    // The answer keeps the message before the retry and holds the retried one once.
    assert.equal(result.answer, "Reading it. BPM 1 reads 0.12 mm.");
    assert.equal(result.ok, true);
  });
}
