/**
 * /cost prices each model's tokens at that model's own prices: after a
 * switch with /provider, for sub-agents on their own model, and after a
 * session is resumed (old session files, with a total only, still load).
 */
import assert from "node:assert/strict";
import { runSlash } from "../../src/cli/repl/slash.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { ask, savedRun, testApps } from "../support/test_app.ts";
import { call, routed } from "../agent/subagents/harness.ts";

/** `main` costs ten times `fast`; `cheap` has no prices. */
const MODELS = `
[llm.models]
main = { model = "big", price_in = 10.0, price_out = 20.0 }
fast = { model = "small", price_in = 1.0, price_out = 2.0 }
cheap = "tiny"
`;

function configText(state: string, extra = ""): string {
  return `[state]\ndir = "${state}"\n[agent]\nagent_md = ""\n${extra}${MODELS}`;
}

Deno.test("/cost after switching model mid-session prices each model's tokens at its own prices", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          expect: { model: "big" },
          respond: { text: "a1", usage: { prompt_tokens: 1_000, completion_tokens: 100 } },
        },
        {
          expect: { model: "small" },
          respond: { text: "a2", usage: { prompt_tokens: 2_000, completion_tokens: 500 } },
        },
      ],
    },
  });
  await using apps = await testApps((state) => configText(state), llm.url);
  const { io } = apps;
  const app = await apps.open();
  await ask(app, "q1");
  await runSlash("/provider fast", app, io);
  await ask(app, "q2");
  assert.deepEqual(llm.failures, []);
  io.text();
  await runSlash("/cost", app, io);
  const text = io.text();
  assert.match(text, /tokens this session: 3000 in · 600 out · 3600 total/);
  // main: (1000 × 10 + 100 × 20) / 1e6; fast: (2000 × 1 + 500 × 2) / 1e6.
  assert.match(text, /main: 1000 in · 100 out · 1100 total\n\s+cost at main's prices: \$0\.0120/);
  assert.match(text, /fast: 2000 in · 500 out · 2500 total\n\s+cost at fast's prices: \$0\.0030/);
  assert.match(text, /total cost: \$0\.0150\n$/);
});

Deno.test("/cost prices sub-agent tokens at the sub-agent's model's prices", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(3, (w) => {
      if (w.agent === "device_search") {
        return {
          ...call("return", { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] }),
          usage: { prompt_tokens: 4_000, completion_tokens: 1_000 },
        };
      }
      const usage = { prompt_tokens: 300, completion_tokens: 30 };
      return w.step === 0
        ? { ...call("spawn_subagent", { agent: "device_search", task: "gun charge" }), usage }
        : { text: "LINAC:GUN:CHARGE", usage };
    }),
  });
  await using apps = await testApps(
    (state) => configText(state, `[agents]\nmodel = "fast"\n[llm]\ndefault = "cheap"\n`),
    llm.url,
  );
  const { io } = apps;
  const app = await apps.open();
  await ask(app, "find the gun charge monitor");
  assert.deepEqual(llm.failures, []);
  assert.equal(app.agents.list()[0]?.status, "done");
  io.text();
  await runSlash("/cost", app, io);
  const text = io.text();
  assert.match(text, /tokens this session: 600 in · 60 out · 660 total/);
  assert.match(text, /sub-agents: 1 runs, 1 model calls, 5000 tokens/);
  assert.match(
    text,
    /cheap: 600 in · 60 out · 660 total\n\s+no prices configured for cheap \(price_in \/ price_out in \[llm\.models\.cheap\]\)/,
  );
  // (4000 × 1 + 1000 × 2) / 1e6
  assert.match(
    text,
    /fast: 4000 in · 1000 out · 5000 total\n\s+cost at fast's prices: \$0\.0060/,
  );
  assert.match(text, /total cost: \$0\.0060, leaving out cheap \(no prices\)\n$/);
});

Deno.test("a resumed session keeps its tokens by model, its sub-agents' included", async () => {
  await using apps = await testApps((state) => configText(state));
  const { io } = apps;
  const first = await apps.open();
  const id = first.session.id;
  try {
    first.session.messages.push({ role: "user", content: "q1" });
    first.session.addUsage(
      { promptTokens: 1_000, completionTokens: 100, totalTokens: 1_100 },
      "main",
    );
    await first.sessions.save(first.session);
    first.session.addUsage(
      { promptTokens: 2_000, completionTokens: 500, totalTokens: 2_500 },
      "fast",
    );
    await first.sessions.save(first.session);
    await first.sessions.saveRun(id, savedRun());
  } finally {
    await apps.close(first);
  }

  const app = await apps.open({ resume: id });
  await runSlash("/cost", app, io);
  const text = io.text();
  assert.match(text, /tokens this session: 3000 in · 600 out · 3600 total/);
  // main: ((1000 + 500) × 10 + (100 + 100) × 20) / 1e6
  assert.match(text, /main: 1500 in · 200 out · 1700 total\n\s+cost at main's prices: \$0\.0190/);
  assert.match(text, /fast: 2000 in · 500 out · 2500 total\n\s+cost at fast's prices: \$0\.0030/);
  assert.match(text, /total cost: \$0\.0220\n$/);
});

Deno.test("an old session file with only a total still loads, its tokens shown without a price", async () => {
  await using apps = await testApps((state) => configText(state));
  const { io } = apps;
  await Deno.mkdir(`${apps.stateDir}/sessions`);
  const records = [
    { t: "meta", id: "old", started_at: 5, version: 1 },
    { t: "message", m: { role: "user", content: "q1" } },
    { t: "usage", usage: { promptTokens: 10, completionTokens: 2, totalTokens: 12 } },
    {
      t: "agent",
      // Saved by an older version: no usage, only a token count.
      run: { ...savedRun({ tokens: 30 }), usage: undefined },
    },
  ];
  await Deno.writeTextFile(
    `${apps.stateDir}/sessions/old.jsonl`,
    records.map((r) => JSON.stringify(r)).join("\n") + "\n",
  );
  const app = await apps.open({ resume: "old" });
  assert.deepEqual(app.session.userInputs(), ["q1"]);
  await runSlash("/cost", app, io);
  const text = io.text();
  assert.match(text, /tokens this session: 10 in · 2 out · 12 total/);
  assert.match(text, /main: 0 in · 0 out · 0 total\n\s+cost at main's prices: \$0\.0000/);
  // The session's total (no model kept) and the run's tokens (no split kept).
  assert.match(
    text,
    /not split by model \(saved by an older version\): 10 in · 2 out · 42 total/,
  );
  assert.match(text, /total cost: \$0\.0000, leaving out 42 tokens not split by model\n$/);
});

Deno.test("/cost after /resume counts only the resumed session's sub-agents", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(3, (w) => {
      if (w.agent === "device_search") {
        return {
          ...call("return", { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] }),
          usage: { prompt_tokens: 4_000, completion_tokens: 1_000 },
        };
      }
      return w.step === 0
        ? call("spawn_subagent", { agent: "device_search", task: "gun charge" })
        : { text: "LINAC:GUN:CHARGE" };
    }),
  });
  await using apps = await testApps(
    (state) => configText(state, `[agents]\nmodel = "fast"\n`),
    llm.url,
  );
  const { io } = apps;
  const app = await apps.open();
  await ask(app, "find the gun charge monitor");
  assert.deepEqual(llm.failures, []);
  assert.equal(app.agents.list()[0]?.model, "fast");
  // Another session, saved with a sub-agent of its own on main.
  const records = [
    { t: "meta", id: "other", started_at: 5, version: 1 },
    { t: "message", m: { role: "user", content: "q1" } },
    {
      t: "usage",
      usage: { promptTokens: 1_000, completionTokens: 100, totalTokens: 1_100 },
      by_model: { main: { promptTokens: 1_000, completionTokens: 100, totalTokens: 1_100 } },
    },
    {
      t: "agent",
      run: savedRun({ id: "agent-9", agent: "log_analysis" }),
    },
  ];
  await Deno.writeTextFile(
    `${apps.stateDir}/sessions/other.jsonl`,
    records.map((r) => JSON.stringify(r)).join("\n") + "\n",
  );

  await runSlash("/resume other", app, io);
  io.text();
  await runSlash("/cost", app, io);
  const text = io.text();
  assert.match(text, /tokens this session: 1000 in · 100 out · 1100 total/);
  assert.match(text, /sub-agents: 1 runs, 1 model calls, 600 tokens/);
  // main: ((1000 + 500) × 10 + (100 + 100) × 20) / 1e6; nothing of the first session's on fast.
  assert.match(text, /main: 1500 in · 200 out · 1700 total\n\s+cost at main's prices: \$0\.0190/);
  assert.doesNotMatch(text, /fast/);
  assert.match(text, /total cost: \$0\.0190\n$/);
});
