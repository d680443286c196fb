/**
 * Compaction: a 300-turn scripted session with large tool outputs stays under
 * the context window, and every plan decision survives verbatim.
 */
import assert from "node:assert/strict";
import { compactSession, estimateTokens, SUMMARY_PREFIX } from "../../src/agent/compaction.ts";
import { DEFAULT_COMPACTION } from "../../src/agent/compaction.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runTurn } from "../../src/agent/loop.ts";
import { Session } from "../../src/agent/session.ts";
import type { ToolOutcome, ToolSet } from "../../src/agent/tools.ts";
import { LlmError } from "../../src/llm/errors.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { FakeModel } from "../support/fake_model.ts";
import { client, who } from "./subagents/harness.ts";

const WINDOW = 8_000;
const OPTS = { ...DEFAULT_COMPACTION, contextWindow: WINDOW };
/** About 1,500 tokens of archive dump per call, without quotes so JSON escaping adds little. */
const DUMP = Array.from({ length: 120 }, (_, i) => `t${i} RING:BPM:01:X 0.0${i % 10} mm`).join("; ")
  .padEnd(6_000, ".");

/** `dump_archive` returns a large text; `propose_plan` returns a decision. */
class LongTools implements ToolSet {
  decisions: string[] = [];
  specs() {
    return [
      { name: "dump_archive", description: "d", parameters: { type: "object" } },
      { name: "propose_plan", description: "p", parameters: { type: "object" } },
    ];
  }
  isReadOnly(name: string) {
    return name === "dump_archive";
  }
  awaitsCompletion(name: string) {
    return name === "propose_plan";
  }
  previewArgs(_: string, raw: string) {
    return raw;
  }
  execute(name: string, raw: string): Promise<ToolOutcome> {
    if (name === "dump_archive") {
      return Promise.resolve({ ok: true, content: DUMP, result: {}, args: raw });
    }
    const n = this.decisions.length;
    const content = JSON.stringify({
      status: n % 2 ? "rejected" : "completed",
      decision: n % 2 ? "rejected" : "approved",
      plan_hash: `${n}`.padStart(64, "a"),
      note: n % 2 ? "Nothing was written." : "RING:COR:H01:SETPT 0.01 -> 0.02 mrad",
    });
    this.decisions.push(content);
    return Promise.resolve({ ok: true, content, result: {}, args: raw });
  }
}

Deno.test("a 300-turn session with large tool outputs stays under the context window and keeps every plan decision verbatim", async () => {
  let summaries = 0;
  await using llm = await startScriptedLlm({
    scenario: {
      loop: true,
      turns: [(req) => {
        const w = who(req);
        const system = String(req.messages[0]?.content ?? "");
        if (system.startsWith("You compact the history")) {
          summaries++;
          return { text: `- earlier: the operator asked about orbit and RF; summary ${summaries}` };
        }
        const last = req.messages.at(-1);
        if (last?.role === "user") {
          const turn = Number(/turn (\d+)/.exec(String(last.content))?.[1]);
          return turn % 25 === 0
            ? { toolCalls: [{ name: "propose_plan", arguments: { title: `bump ${turn}` } }] }
            : { toolCalls: [{ name: "dump_archive", arguments: { turn } }] };
        }
        return { text: `noted (${w.messages.length} messages in view)` };
      }],
    },
  });
  const model = client(llm.url);
  const tools = new LongTools();
  const session = new Session("long", 0);
  const compacts: AgentEvent[] = [];
  for (let turn = 1; turn <= 300; turn++) {
    for await (
      const ev of runTurn({
        session,
        input: `turn ${turn}: what does the archive say now?`,
        model,
        tools,
        systemPrompt: "You are the operator's assistant.",
        maxIterations: 5,
        signal: new AbortController().signal,
        compact: (s, sp, signal) => compactSession(s, model, sp, OPTS, signal),
      })
    ) {
      if (ev.type === "compact") compacts.push(ev);
      assert.notEqual(ev.type, "error", JSON.stringify(ev));
    }
  }
  assert.deepEqual(llm.failures, []);
  assert.equal(tools.decisions.length, 12);
  assert.ok(compacts.length > 10, `compacted ${compacts.length} times`);
  assert.ok(summaries > 0, "older history was summarised by the model");
  // Every request the model saw was under the window (the server's own estimate, ~4 chars a token).
  const largest = Math.max(
    ...llm.requests.map((r) => Math.ceil(JSON.stringify(r.body.messages).length / 4)),
  );
  assert.ok(largest < WINDOW, `largest prompt ~${largest} tokens`);
  assert.ok(estimateTokens(session.messages) < 0.8 * WINDOW + 2_000);
  // Every plan decision is still there, verbatim, in the session and in the last prompt.
  const lastPrompt = llm.requests.at(-1)?.body.messages ?? [];
  for (const d of tools.decisions) {
    assert.ok(session.messages.some((m) => m.role === "tool" && m.content === d), d);
    assert.ok(lastPrompt.some((m) => m.role === "tool" && m.content === d), d);
  }
  // The conversation still ends with the latest turn, whole.
  assert.equal(session.userInputs().at(-1), "turn 300: what does the archive say now?");
  assert.ok(session.messages[0]?.content.startsWith(SUMMARY_PREFIX));
});

function longSession(turns: number): Session {
  const s = new Session("s", 0);
  for (let i = 1; i <= turns; i++) {
    s.messages.push(
      { role: "user", content: `q${i}` },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: `c${i}`, name: "read_log", arguments: "{}" }],
      },
      { role: "tool", toolCallId: `c${i}`, name: "read_log", content: "x".repeat(5_000) },
      { role: "assistant", content: `a${i}` },
    );
  }
  return s;
}

Deno.test("old large tool results are trimmed first; the last user messages stay whole", async () => {
  const s = longSession(6);
  const model = new FakeModel([]);
  const ev = await compactSession(
    s,
    model,
    "",
    { ...OPTS, contextWindow: 7_200 },
    new AbortController().signal,
  );
  assert.equal(ev?.type, "compact");
  assert.ok(ev && ev.tokensAfter < ev.tokensBefore);
  assert.equal(model.requests.length, 0, "trimming was enough: no summary call");
  const tools = s.messages.filter((m) => m.role === "tool");
  assert.deepEqual(tools.map((m) => m.content.length < 5_000), [
    true,
    true,
    true,
    false,
    false,
    false,
  ]);
  assert.equal(s.messages.length, 24);
});

Deno.test("when the summary call fails the trimmed session is kept and the turn goes on", async () => {
  const s = longSession(12);
  const model = new FakeModel([{ error: new LlmError("server", "boom") }]);
  const before = estimateTokens(s.messages);
  const ev = await compactSession(
    s,
    model,
    "",
    { ...OPTS, contextWindow: 3_000 },
    new AbortController().signal,
  );
  assert.equal(model.requests.length, 1);
  assert.ok(ev && ev.tokensAfter < before);
  assert.equal(s.userInputs().length, 12, "nothing was summarised away");
});

Deno.test("/compact by hand summarises even under the threshold", async () => {
  const s = longSession(5);
  const model = new FakeModel([{ text: "- asked q1..q2" }]);
  const ev = await compactSession(s, model, "", OPTS, new AbortController().signal, true);
  assert.equal(ev?.type, "compact");
  assert.equal(s.messages[0]?.content, `${SUMMARY_PREFIX}\n- asked q1..q2`);
  assert.deepEqual(s.userInputs().slice(1), ["q3", "q4", "q5"]);
});

Deno.test("a summary's tokens count in the cost under its model's name, not as the context in use", async () => {
  const s = longSession(5);
  const model = new FakeModel([{ text: "- summary" }]);
  await compactSession(s, model, "", OPTS, new AbortController().signal, true);
  assert.deepEqual([...s.usageByModel], [[model.name, {
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
  }]]);
  assert.equal(s.lastCallUsage.promptTokens, 0);
});

Deno.test("the endpoint's prompt count triggers compaction even when the estimate is low", async () => {
  const s = longSession(5);
  s.lastCallUsage = { promptTokens: 7_900, completionTokens: 0, totalTokens: 7_900 };
  const model = new FakeModel([{ text: "- summary" }]);
  const ev = await compactSession(
    s,
    model,
    "",
    { ...OPTS, trimChars: 100_000 },
    new AbortController().signal,
  );
  assert.equal(ev?.tokensBefore, 7_900);
  assert.equal(model.requests.length, 1);
  assert.equal(s.lastCallUsage.promptTokens, 0, "the stale count is dropped once compacted");
});

Deno.test("when only an earlier summary and plan decisions are old, nothing is summarised again", async () => {
  const s = new Session("s", 0);
  s.messages.push(
    { role: "user", content: `${SUMMARY_PREFIX}\n- before` },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "p", name: "propose_plan", arguments: "{}" }],
    },
    { role: "tool", toolCallId: "p", name: "propose_plan", content: '{"status":"rejected"}' },
  );
  for (let i = 1; i <= 3; i++) {
    s.messages.push({ role: "user", content: `q${i}` }, {
      role: "assistant",
      content: "y".repeat(12_000),
    });
  }
  const model = new FakeModel([]);
  const ev = await compactSession(s, model, "", OPTS, new AbortController().signal);
  assert.equal(model.requests.length, 0);
  assert.equal(ev, undefined);
  assert.equal(s.messages.length, 9);
});
