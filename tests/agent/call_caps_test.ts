/**
 * Caps on a model's fan-out, against a hostile scripted model on the wire:
 * one message of thousands of tool calls runs only the first ones; a turn
 * runs at most its cap of calls, and a model that keeps calling after being
 * told is stopped. Every call is answered, so the conversation stays valid.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runTurn } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { Simulator } from "../../src/adapters/simulator/mod.ts";
import { type ChatRequest, type Respond, startScriptedLlm } from "../support/scripted_llm.ts";
import { client } from "./subagents/harness.ts";

const Args = z.strictObject({ n: z.int().describe("which") });

/** A registry of one read-only tool that counts its calls. */
function counting() {
  const ran: number[] = [];
  const tool = defineTool<typeof Args, { n: number }>({
    name: "read",
    description: "reads",
    parameters: Args,
    readOnly: true,
    execute: ({ n }) => {
      ran.push(n);
      return Promise.resolve({ n });
    },
  });
  const sim = new Simulator();
  const registry = new ToolRegistry([tool], { cs: sim, now: () => 0 }, {
    maxOutputChars: 2_000,
    timeoutMs: 10_000,
  });
  return { ran, registry };
}

/** A message of `n` calls of `read`, numbered from `from`. */
function calls(n: number, from = 0): Respond {
  return {
    toolCalls: Array.from({ length: n }, (_, i) => ({
      id: `c${from + i}`,
      name: "read",
      arguments: { n: from + i },
    })),
    chunkSize: 4096,
  };
}

async function turn(
  respond: (req: ChatRequest, i: number) => Respond,
  caps: { perMessage: number; perTurn: number },
  maxIterations = 10,
) {
  let i = 0;
  await using llm = await startScriptedLlm({
    scenario: { loop: true, turns: [(req) => respond(req, i++)] },
  });
  const { ran, registry } = counting();
  const session = new Session("s", 0);
  const events: AgentEvent[] = [];
  for await (
    const ev of runTurn({
      session,
      input: "go",
      model: client(llm.url),
      tools: registry,
      systemPrompt: "system",
      maxIterations,
      signal: new AbortController().signal,
      toolCalls: caps,
    })
  ) events.push(ev);
  return { events, ran, session, requests: llm.requests };
}

/** Each assistant message's tool calls have one result each, in order. */
function assertPaired(session: Session): void {
  const msgs = session.messages;
  msgs.forEach((m, i) => {
    if (m.role !== "assistant" || !m.toolCalls?.length) return;
    const results = msgs.slice(i + 1, i + 1 + m.toolCalls.length);
    assert.deepEqual(
      results.map((r) => r.role === "tool" ? r.toolCallId : r.role),
      m.toolCalls.map((c) => c.id),
    );
  });
}

Deno.test("a message of 5,000 tool calls runs the first 20; the rest are answered 'not run' and said once", async () => {
  const { events, ran, session, requests } = await turn(
    (_, i) => i === 0 ? calls(5_000) : { text: "I asked for too much at once." },
    { perMessage: 20, perTurn: 100 },
  );
  assert.deepEqual(ran.sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i));
  const refused = events.filter((e) => e.type === "tool_calls_refused");
  assert.deepEqual(refused, [{
    type: "tool_calls_refused",
    cap: "per_message",
    count: 4_980,
    limit: 20,
    key: "[agent] max_tool_calls_per_message",
    message:
      "4980 of the model's 5000 tool calls in one message were not run: at most 20 run per message ([agent] max_tool_calls_per_message)",
  }]);
  assert.equal(events.filter((e) => e.type === "tool_start").length, 20);
  assert.equal(events.at(-1)?.type, "turn_complete");
  // The model reads why: the calls it made past the cap are answered, not dropped silently.
  const second = requests[1]?.body.messages ?? [];
  const results = second.filter((m) => m.role === "tool");
  assert.equal(results.length, 40, "20 run, 20 refusals listed; the other 4,960 left out");
  const refusal = String(results.find((m) => m.tool_call_id === "c20")?.content);
  assert.match(refusal, /not run: the message asked for 5000 tool calls and at most 20 of one/);
  assert.match(refusal, /4980 calls were refused, 4960 of them are left out of this conversation/);
  assertPaired(session);
  // The session does not carry the thousands of calls into every later request.
  assert.ok(JSON.stringify(second).length < 40_000, `${JSON.stringify(second).length} bytes`);
});

Deno.test("a turn runs at most its cap of calls, and a model that keeps calling after being told is stopped", async () => {
  const { events, ran, session, requests } = await turn(
    (_, i) => calls(15, i * 15),
    { perMessage: 20, perTurn: 40 },
  );
  assert.equal(ran.length, 40);
  assert.equal(requests.length, 4, "told once, it asked again, and the turn ended");
  const refused = events.filter((e) => e.type === "tool_calls_refused");
  assert.deepEqual(refused.map((e) => e.type === "tool_calls_refused" && [e.cap, e.count]), [
    ["per_turn", 5],
    ["per_turn", 15],
  ]);
  const last = events.at(-1);
  assert.ok(last?.type === "error", JSON.stringify(last));
  assert.equal(last.kind, "tool_calls");
  assert.match(last.message, /kept calling tools after the turn had run its 40/);
  const told = requests[3]?.body.messages.filter((m) => m.role === "tool").at(-1)?.content;
  assert.match(String(told), /not run: this turn has run its 40 tool calls/);
  assertPaired(session);
});

Deno.test("a model told that the turn's calls are spent may still answer", async () => {
  const { events, ran } = await turn(
    (_, i) => i < 3 ? calls(15, i * 15) : { text: "Here is what I have." },
    { perMessage: 20, perTurn: 40 },
  );
  assert.equal(ran.length, 40);
  assert.equal(events.at(-1)?.type, "turn_complete");
});
