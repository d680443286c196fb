/**
 * Budgets of the agent tree: infrastructure retries cost no turns, the turn
 * budget is shared by every sub-agent, and the parent's stream shows each
 * run's start and end.
 */
import assert from "node:assert/strict";
import { budgetedModel, TreeBudget } from "../../../src/agent/subagents/budget.ts";
import type { ModelClient } from "../../../src/llm/types.ts";
import { startScriptedLlm } from "../../support/scripted_llm.ts";
import { call, routed, setup, who } from "./harness.ts";

const RESULT = { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] };

Deno.test("a model call retried after a server error costs the sub-agent no turn", async () => {
  let failed = false;
  await using llm = await startScriptedLlm({
    scenario: routed(4, (w) => {
      if (w.agent === "parent") {
        return w.step === 0
          ? call("spawn_subagent", { agent: "device_search", task: "the gun charge monitor" })
          : { text: "done" };
      }
      if (!failed) {
        failed = true;
        return { fault: "server_error", status: 503 };
      }
      return call("return", RESULT);
    }),
  });
  await using t = await setup(llm.url, { retries: 2 });
  const events = await t.ask("find it");
  assert.deepEqual(llm.failures, []);
  assert.equal(llm.remaining(), 0);
  const run = t.manager.get("agent-1");
  assert.equal(run?.status, "done");
  assert.equal(run?.turns, 1, "the retry was not a turn");
  // The parent's stream saw the run start and end, with lineage.
  assert.deepEqual(
    events.filter((e) => e.type === "subagent").map((e) =>
      e.type === "subagent" && [e.id, e.parentId, e.status]
    ),
    [["agent-1", "operator", "started"], ["agent-1", "operator", "done"]],
  );
});

Deno.test("the turn budget is shared by the whole tree: the second sub-agent stops when it is used up", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(6, (w) => {
      if (w.agent === "parent") {
        if (w.step < 2) {
          return call("spawn_subagent", { agent: "device_search", task: `search ${w.step}` });
        }
        return { text: "done" };
      }
      return w.step === 0
        ? call("search_device", { pattern: "LINAC:GUN:*" })
        : call("return", RESULT);
    }),
  });
  // Three model calls for all sub-agents together: the first run takes two, the second gets one.
  await using t = await setup(llm.url, { maxTreeTurns: 3 });
  await t.ask("search twice");
  assert.deepEqual(llm.failures, []);
  const [first, second] = t.manager.list();
  assert.equal(first?.status, "done");
  assert.equal(first?.turns, 2);
  assert.equal(second?.status, "failed");
  assert.equal(second?.turns, 1);
  assert.match(second?.error ?? "", /budget of 3 model calls is used up/);
});

Deno.test("a call still in flight when another session is resumed is not charged to that session", async () => {
  let answer!: () => void;
  const answered = new Promise<void>((r) => answer = r);
  const usage = { promptTokens: 90, completionTokens: 10, totalTokens: 100 };
  const inner: ModelClient = {
    name: "main",
    model: "m",
    async *complete() {
      await answered;
      yield {
        type: "done",
        response: { text: "x", toolCalls: [], usage, finishReason: "stop", model: "m" },
      };
    },
  };
  const budget = new TreeBudget(10, 1_000);
  const seen: number[] = [];
  const model = budgetedModel(
    inner,
    budget,
    new AbortController(),
    (u) => seen.push(u.totalTokens),
  );
  const call = (async () => {
    for await (
      const _ of model.complete({ messages: [], tools: [] }, new AbortController().signal)
    ) { /* drain */ }
  })();
  budget.reset(3, 300); // another session resumed while the call waits
  answer();
  await call;
  assert.deepEqual([budget.turns, budget.tokens], [3, 300]);
  assert.deepEqual(seen, [100], "the run's own count still has it");
  // A call that begins after the reset is charged as usual.
  const next = budgetedModel(inner, budget, new AbortController(), () => {});
  for await (const _ of next.complete({ messages: [], tools: [] }, new AbortController().signal)) {
    /* drain */
  }
  assert.deepEqual([budget.turns, budget.tokens], [4, 400]);
});

Deno.test("spawns made together in one message cannot overrun the tree's budget: each holds its first call before it starts", async () => {
  const spawns = 50;
  await using llm = await startScriptedLlm({
    scenario: {
      loop: true,
      turns: [(req) => {
        const w = who(req);
        if (w.agent !== "parent") return call("search_device", { pattern: "LINAC:GUN:*" });
        if (w.step > 0) return { text: "done" };
        return {
          toolCalls: Array.from({ length: spawns }, (_, i) => ({
            name: "spawn_subagent",
            arguments: { agent: "device_search", task: `search ${i}` },
          })),
        };
      }],
    },
  });
  await using t = await setup(llm.url, { maxTreeTurns: 5 });
  const events = await t.ask("search fifty times at once");
  const byAgents = llm.requests.filter((r) => who(r.body).agent !== "parent");
  assert.ok(byAgents.length <= 5, `${byAgents.length} model requests against a budget of 5`);
  assert.equal(t.manager.list().length, 5, "only the spawns that held a call started");
  const refused = events.filter((e) =>
    e.type === "tool_end" && !e.ok &&
    /not started: the agent tree's budget of 5 model calls is used up/.test(
      JSON.stringify(e.result),
    )
  );
  assert.equal(refused.length, spawns - 5);
  assert.equal(events.at(-1)?.type, "turn_complete");
});
