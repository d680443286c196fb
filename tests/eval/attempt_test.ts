import assert from "node:assert/strict";
import { runEval } from "../../src/eval/runner.ts";
import { parseTask, type Task } from "../../src/eval/task.ts";
import { ManualTimers } from "../support/manual_timers.ts";
import { waitFor } from "../support/run_agent.ts";
import { startScriptedLlm } from "../support/scripted_llm_server.ts";
import type { Scenario } from "../support/scripted_llm_types.ts";
import { defaultConfig, scriptedEndpoint, testEnv } from "./scripted_model.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function task(id: string, extra: Record<string, unknown> = {}): Task {
  return parseTask({
    id,
    category: "read-values",
    title: id,
    turns: ["What is the stored beam current?"],
    grade: [{ check: "read", devices: ["RING:DCCT:CURRENT"] }],
    ...extra,
  }, `${id}.json`);
}

const reads: Scenario = {
  turns: [
    {
      respond: {
        toolCalls: [{ name: "get_parameter", arguments: { devices: ["RING:DCCT:CURRENT"] } }],
      },
    },
    { respond: { text: "{{last_tool_result.readings[0].value}} mA" } },
  ],
};

async function tempDirs(): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const e of Deno.readDir(Deno.env.get("TMPDIR") ?? "/tmp")) {
    if (e.name.startsWith("accel-eval-")) out.add(e.name);
  }
  return out;
}

Deno.test({
  name:
    "an attempt that crashes, times out or goes over budget is a failure with its reason, and the run goes on",
  ...opts,
  async fn() {
    const scenarios: Record<string, Scenario> = {
      "bad-request": { loop: true, turns: [{ respond: { fault: "bad_request" } }] },
      // Answers after ten minutes: only the task's time limit ends it.
      "slow": { turns: [{ respond: { fault: "delay", ms: 600_000, then: { text: "late" } } }] },
      "greedy": {
        turns: [{
          respond: {
            toolCalls: [{ name: "get_parameter", arguments: { devices: ["RING:DCCT:CURRENT"] } }],
            usage: { prompt_tokens: 50_000, completion_tokens: 10 },
          },
        }, { respond: { text: "done" } }],
      },
      "fine": reads,
      "broken": reads,
    };
    const tasks = [
      task("bad-request"),
      task("slow", { limits: { seconds: 1 } }),
      task("greedy", { limits: { seconds: 60, tokens: 10_000 } }),
      task("fine"),
      // A starting condition the simulator refuses: the harness itself fails.
      task("broken", { conditions: { writes: { "NO:SUCH:DEVICE": 1 } } }),
    ];
    const before = await tempDirs();
    // The limits run on a clock the test moves: the slow task's second passes when told.
    const timers = new ManualTimers();
    const running = runEval({
      tasks,
      concurrency: 2,
      base: await defaultConfig(),
      model: "main",
      endpoint: scriptedEndpoint((t) => scenarios[t.id] as Scenario),
      env: testEnv,
      timers,
    });
    await timers.armed(1_000);
    timers.advance(1_000);
    const recs = await running;
    const by = Object.fromEntries(recs.map((r) => [r.task, r]));
    assert.match(by["bad-request"]?.reason ?? "", /400|bad request|rejected/i);
    assert.match(by["slow"]?.reason ?? "", /timed out after 1 s/);
    assert.match(by["greedy"]?.reason ?? "", /budget exceeded: \d+ tokens > 10000/);
    assert.equal(by["fine"]?.passed, true, by["fine"]?.reason);
    assert.match(by["broken"]?.reason ?? "", /^crashed: Unknown device "NO:SUCH:DEVICE"/);
    assert.ok(recs.slice(0, 3).every((r) => !r.passed));
    const after = await tempDirs();
    assert.deepEqual([...after].filter((d) => !before.has(d)), [], "attempt state left behind");
  },
});

Deno.test({
  name:
    "attempts do not share state, and their plans are approved automatically as the audit records",
  ...opts,
  async fn() {
    const write: Scenario = {
      turns: [
        {
          respond: {
            toolCalls: [{
              name: "propose_plan",
              arguments: {
                description: "H02 to 0.28",
                actions: [{
                  type: "write",
                  device: "LINAC:COR:H02:SETPT",
                  value: 0.28,
                  reason: "test",
                }],
              },
            }],
          },
        },
        { respond: { text: "done" } },
      ],
    };
    const readBack: Scenario = {
      turns: [
        {
          respond: {
            toolCalls: [{ name: "get_parameter", arguments: { devices: ["LINAC:COR:H02:SETPT"] } }],
          },
        },
        { respond: { text: "H02 is {{last_tool_result.readings[0].value}}" } },
      ],
    };
    const conditions = { writes: { "LINAC:COR:H02:SETPT": 0.2 } };
    const w = task("writes", {
      conditions,
      grade: [{ check: "written", devices: ["LINAC:COR:H02:SETPT"] }],
    });
    const r = task("reads", {
      conditions,
      grade: [{ check: "answer_number", truth: { value: 0.2 }, tolerance: { abs: 1e-9 } }],
    });
    const recs = await runEval({
      tasks: [w, r],
      base: await defaultConfig(),
      model: "main",
      endpoint: scriptedEndpoint((t) => (t.id === "writes" ? write : readBack)),
      env: testEnv,
    });
    assert.equal(recs[0]?.passed, true, recs[0]?.reason);
    assert.equal(recs[1]?.passed, true, recs[1]?.reason);
    // The eval's approvals are automatic, on the simulator only, and said so in the audit.
    const approved = recs[0]?.audit.filter((a) => a.decision === "approved") ?? [];
    assert.ok(approved.length >= 1);
    assert.ok(approved.every((a) => a.decidedBy === "sim-eval auto-approval"));
    assert.deepEqual(recs[0]?.written, ["LINAC:COR:H02:SETPT"]);
    assert.deepEqual(recs[1]?.audit, []);
  },
});

Deno.test({
  name: "a cancelled run ends the attempt in flight and records the rest as not run",
  ...opts,
  async fn() {
    const stop = new AbortController();
    // The model answers after ten minutes: only the cancel can end the attempt.
    const slow: Scenario = {
      loop: true,
      turns: [{ respond: { fault: "delay", ms: 600_000, then: { text: "late" } } }],
    };
    const tasks = [task("first"), task("second"), task("third")];
    const servers: Awaited<ReturnType<typeof startScriptedLlm>>[] = [];
    const running = runEval({
      tasks,
      base: await defaultConfig(),
      model: "main",
      endpoint: async () => {
        const llm = await startScriptedLlm({ scenario: slow });
        servers.push(llm);
        return { baseUrl: llm.url, close: () => llm.close() };
      },
      env: testEnv,
      signal: stop.signal,
    });
    await waitFor(() => (servers[0]?.requests.length ?? 0) > 0, 60_000, "the first model call");
    stop.abort(new Error("cancelled by SIGINT"));
    const recs = await running;
    assert.equal(servers.length, 1, "no attempt started after the cancel");
    assert.match(recs[0]?.reason ?? "", /cancelled by SIGINT/);
    assert.deepEqual(recs.slice(1).map((r) => r.reason), [
      "not run: cancelled by SIGINT",
      "not run: cancelled by SIGINT",
    ]);
  },
});

Deno.test({
  name: "an attempt is priced at the model's configured prices",
  ...opts,
  async fn() {
    const base = structuredClone(await defaultConfig());
    base.config.llm.models["main"] = { model: "gpt-4o", price_in: 2.5, price_out: 10 };
    const scenario: Scenario = {
      turns: [
        {
          respond: {
            toolCalls: [{ name: "get_parameter", arguments: { devices: ["RING:DCCT:CURRENT"] } }],
            usage: { prompt_tokens: 1000, completion_tokens: 100 },
          },
        },
        { respond: { text: "done", usage: { prompt_tokens: 2000, completion_tokens: 200 } } },
      ],
    };
    const [rec] = await runEval({
      tasks: [task("priced")],
      base,
      model: "main",
      endpoint: scriptedEndpoint(() => scenario),
      env: testEnv,
    });
    assert.equal(rec?.promptTokens, 3000);
    assert.equal(rec?.completionTokens, 300);
    assert.ok(Math.abs((rec?.costUsd ?? 0) - (3000 * 2.5 + 300 * 10) / 1e6) < 1e-12);
  },
});
