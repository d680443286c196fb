/**
 * The manager with an in-process model: turn limits, the nudge to finish,
 * time-outs, and model resolution.
 */
import assert from "node:assert/strict";
import { TreeBudget } from "../../../src/agent/subagents/budget.ts";
import { parseAgentDefinition } from "../../../src/agent/subagents/definition.ts";
import { SubagentManager } from "../../../src/agent/subagents/manager.ts";
import type { ModelClient } from "../../../src/llm/types.ts";
import { ALL_TOOLS } from "../../../src/tools/mod.ts";
import { buildSubagentTools } from "../../../src/tools/subagent_tools.ts";
import { fixture } from "../../plan/fixture.ts";
import { FakeModel, type FakeStep } from "../../support/fake_model.ts";
import { hasSettled, ManualTimers } from "../../support/manual_timers.ts";

const def = (extra: string) =>
  parseAgentDefinition(
    `---\nname: finder\ndescription: d\ntools: [search_device]\noutput: "{n: integer}"\n${extra}---\nFind.\n`,
    "finder.md",
  );

async function managerWith(
  extra: string,
  models: Record<string, ModelClient> = {},
  budget = new TreeBudget(50, 1e9),
  timers?: ManualTimers,
) {
  // Only the fixture's control system is used: its directory goes when this returns.
  await using f = await fixture();
  const manager: SubagentManager = new SubagentManager({
    definitions: [def(extra)],
    buildTools: (ctx) =>
      buildSubagentTools(ctx, {
        catalogue: ALL_TOOLS,
        deps: { cs: f.cs, now: () => 0 },
        registry: { maxOutputChars: 5_000, timeoutMs: 5_000 },
        manager,
      }),
    modelFor: (name) => Promise.resolve(models[name] ?? new FakeModel([])),
    budget,
    now: () => 0,
    timers,
  });
  return manager;
}

const parent = (model: ModelClient) => ({
  id: "operator",
  level: 1,
  model: () => Promise.resolve(model),
});
const RETURN: FakeStep = { toolCalls: [{ name: "return", arguments: '{"n":1}' }] };

Deno.test("a sub-agent that answers in text is nudged to return, and fails when its turns are used up", async () => {
  const model = new FakeModel([{ text: "I think 3." }, { text: "Really 3." }]);
  const m = await managerWith("max_turns: 2\n");
  const run = await m.spawn(parent(model), { agent: "finder", task: "count" });
  assert.equal(run.status, "failed");
  assert.equal(run.error, "used its 2 turns without calling return");
  assert.match(
    String(model.requests[1]?.messages.at(-1)?.content),
    /You have not finished\. Call `return`/,
  );
});

Deno.test("a sub-agent whose model hangs past its timeout fails with the timeout, not before", async () => {
  const timers = new ManualTimers();
  const m = await managerWith("timeout: 0.05\n", {}, undefined, timers);
  const running = m.spawn(parent(new FakeModel([{ hang: true }])), {
    agent: "finder",
    task: "x",
  });
  await timers.armed(50);
  timers.advance(49);
  assert.equal(await hasSettled(running), false, "still running 1 ms before its timeout");
  timers.advance(1);
  const run = await running;
  assert.equal(run.status, "failed");
  assert.equal(run.error, "timed out after 0.05 s");
});

Deno.test("model resolution: the definition's model, else the one bound at spawn, else the parent's", async () => {
  const own = new FakeModel([RETURN]);
  const bound = new FakeModel([RETURN]);
  const parents = new FakeModel([RETURN]);
  const named = { own: own as ModelClient, bound: bound as ModelClient };
  const withOwn = await managerWith("model: own\n", named);
  await withOwn.spawn(parent(parents), { agent: "finder", task: "x", model: "bound" });
  const plain = await managerWith("", named);
  await plain.spawn(parent(parents), { agent: "finder", task: "x", model: "bound" });
  await plain.spawn(parent(parents), { agent: "finder", task: "x" });
  assert.deepEqual([own.requests.length, bound.requests.length, parents.requests.length], [
    1,
    1,
    1,
  ]);
  assert.deepEqual(plain.list().map((r) => r.status), ["done", "done"]);
});

Deno.test("a foreground sub-agent is cancelled with its parent's turn", async () => {
  const m = await managerWith("");
  const controller = new AbortController();
  const running = m.spawn(parent(new FakeModel([{ hang: true }])), {
    agent: "finder",
    task: "x",
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(new Error("cancelled by Ctrl-C")), 20);
  const run = await running;
  assert.equal(run.status, "cancelled");
  assert.equal(run.error, "cancelled by Ctrl-C");
});

Deno.test("the tree's budget is the session's: resuming another starts from what its runs had spent", async () => {
  const budget = new TreeBudget(50, 1e9);
  const manager = await managerWith("", {}, budget);
  const run = await manager.spawn(parent(new FakeModel([RETURN])), { agent: "finder", task: "n" });
  assert.equal(run.status, "done");
  assert.equal(budget.turns, 1);
  // The same session read again keeps what it spent.
  manager.replace([run]);
  assert.equal(budget.turns, 1);
  // Another session: its own saved runs' spending, not this one's.
  const saved = { ...run, id: "agent-7", turns: 7, tokens: 700 };
  manager.replace([saved, { ...saved, id: "agent-8", turns: 2, tokens: 30 }], "resumed b");
  assert.deepEqual([budget.turns, budget.tokens], [9, 730]);
  manager.replace([], "resumed c");
  assert.deepEqual([budget.turns, budget.tokens], [0, 0]);
});
