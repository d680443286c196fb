import assert from "node:assert/strict";
import { runSlash } from "../../src/cli/repl/slash.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { waitFor } from "../support/run_agent.ts";
import { ask, savedRun, testApps } from "../support/test_app.ts";
import { call, routed, who } from "../agent/subagents/harness.ts";
import type { RunInfo } from "../../src/agent/subagents/manager.ts";

/** One named model; sessions under the test's state directory. */
const SESSIONS_CONFIG = (state: string) =>
  `[state]\ndir = "${state}"\n[agent]\nagent_md = ""\n[llm.models]\nmain = "m"\n`;

Deno.test("/compact summarises by hand, /agents lists restored runs, /resume lists and continues sessions, /cost and /context say more", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        expect: { systemIncludes: "You compact the history" },
        respond: { text: "- q1 to q3 asked" },
      }],
    },
  });
  await using apps = await testApps(
    SESSIONS_CONFIG,
    llm.url,
  );
  const { io } = apps;
  const app = await apps.open();
  await runSlash("/compact", app, io);
  assert.equal(io.text(), "nothing to compact yet\n");
  for (let i = 1; i <= 5; i++) {
    app.session.messages.push({ role: "user", content: `q${i}` }, {
      role: "assistant",
      content: `a${i}`,
    });
  }
  await runSlash("/compact", app, io);
  assert.match(io.text(), /^compacted: ~\d+ → ~\d+ tokens\n$/);
  assert.deepEqual(app.session.userInputs().slice(1), ["q3", "q4", "q5"]);
  await app.sessions.save(app.session);

  await runSlash("/cost", app, io);
  assert.match(
    io.text(),
    /last turn: 0 in[\s\S]*context: \d+ of 128000 tokens \(\d+\.\d%\), compacted 1 times/,
  );
  await runSlash("/context", app, io);
  assert.match(io.text(), /skills: orbit_response, rf_trip, shift_summary; active: none/);

  await runSlash("/agents", app, io);
  assert.equal(io.text(), "no sub-agents in this session\n");
  await app.sessions.saveRun(
    app.session.id,
    savedRun({ background: true, tokens: 10, usage: undefined, result: { total: 0 } }),
  );
  const id = app.session.id;
  await runSlash("/resume", app, io);
  assert.match(io.text(), new RegExp(`● ${id} `));
  await runSlash(`/resume ${id}`, app, io);
  assert.match(io.text(), /resumed .*: 4 questions, 1 sub-agent results; last: q5/);
  await runSlash("/agents", app, io);
  assert.match(
    io.text(),
    /agent-1 device_search level 2, from operator done 1 calls, 10 tokens\n\s+\{"total":0\}/,
  );
  await runSlash("/resume nope", app, io);
  assert.match(io.text(), /no saved session "nope"/);
});

/** Writes a saved session "b" with one sub-agent run of its own, agent-7. */
async function saveSessionB(state: string): Promise<void> {
  const run = savedRun({
    id: "agent-7",
    agent: "log_analysis",
    turns: 2,
    tokens: 70,
    usage: { promptTokens: 60, completionTokens: 10, totalTokens: 70 },
    result: { b: true },
  });
  const records = [
    { t: "meta", id: "b", started_at: 5, version: 1 },
    { t: "message", m: { role: "user", content: "qb" } },
    { t: "agent", run },
  ];
  await Deno.mkdir(`${state}/sessions`, { recursive: true });
  await Deno.writeTextFile(
    `${state}/sessions/b.jsonl`,
    records.map((r) => JSON.stringify(r)).join("\n") + "\n",
  );
}

/** The agent records of a saved session's file. */
async function savedRuns(state: string, id: string): Promise<RunInfo[]> {
  const text = await Deno.readTextFile(`${state}/sessions/${id}.jsonl`);
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l))
    .filter((r) => r.t === "agent").map((r) => r.run);
}

Deno.test("after /resume, /agents lists only the resumed session's sub-agents", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(3, (w) => {
      if (w.agent === "device_search") {
        return call("return", { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] });
      }
      return w.step === 0
        ? call("spawn_subagent", { agent: "device_search", task: "gun charge" })
        : { text: "LINAC:GUN:CHARGE" };
    }),
  });
  await using apps = await testApps(
    SESSIONS_CONFIG,
    llm.url,
  );
  const { io } = apps;
  const app = await apps.open();
  await ask(app, "find the gun charge monitor");
  assert.deepEqual(llm.failures, []);
  const first = app.session.id;
  await saveSessionB(apps.stateDir);
  io.text();

  await runSlash("/resume b", app, io);
  assert.equal(io.text(), "resumed b: 1 questions, 1 sub-agent results; last: qb\n");
  await runSlash("/agents", app, io);
  const agents = io.text();
  assert.match(agents, /agent-7 log_analysis level 2, from operator done 2 calls, 70 tokens/);
  assert.doesNotMatch(agents, /agent-1|device_search/);

  // Back again: the first session's run, and only it.
  await runSlash(`/resume ${first}`, app, io);
  await runSlash("/agents", app, io);
  const back = io.text();
  assert.match(back, /agent-1 device_search level 2, from operator done/);
  assert.doesNotMatch(back, /agent-7/);
});

Deno.test("/resume cancels a background sub-agent still running in the session it leaves, says so, and records it there", async () => {
  await using llm = await startScriptedLlm({
    scenario: routed(4, (w) => {
      if (w.agent === "device_search") {
        // Still waiting for its first answer at /resume; left running, it would be nudged and call again.
        return w.step === 0
          ? { fault: "delay", ms: 400, then: { text: "still looking" } }
          : call("return", { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] });
      }
      return w.step === 0
        ? call("spawn_subagent", {
          agent: "device_search",
          task: "the gun charge monitor",
          background: true,
        })
        : { text: "Searching in the background." };
    }),
  });
  await using apps = await testApps(
    SESSIONS_CONFIG,
    llm.url,
  );
  const { io } = apps;
  const app = await apps.open();
  await ask(app, "find the gun charge monitor");
  const searches = () => llm.requests.filter((r) => who(r.body).agent === "device_search");
  await waitFor(() => searches().length === 1, 60_000, "the sub-agent's model call");
  const first = app.session.id;
  await saveSessionB(apps.stateDir);
  io.text();

  // Resuming the session in use keeps its sub-agent running.
  await runSlash(`/resume ${first}`, app, io);
  assert.doesNotMatch(io.text(), /cancelled/);
  assert.equal(app.agents.get("agent-1")?.status, "running");

  await runSlash("/resume b", app, io);
  assert.equal(
    io.text(),
    `cancelled sub-agents still running in session ${first}: agent-1 (device_search); ` +
      `/resume ${first} shows them\nresumed b: 1 questions, 1 sub-agent results; last: qb\n`,
  );
  await runSlash("/agents", app, io);
  assert.doesNotMatch(io.text(), /agent-1/);

  // Past the delayed answer: the cancelled run made no further model call.
  await new Promise((r) => setTimeout(r, 800));
  assert.equal(searches().length, 1);
  // Its end is recorded in the session it ran for, not in the one resumed.
  assert.deepEqual((await savedRuns(apps.stateDir, "b")).map((r) => r.id), ["agent-7"]);
  const left = (await savedRuns(apps.stateDir, first)).at(-1);
  assert.equal(left?.id, "agent-1");
  assert.equal(left?.status, "cancelled");
  assert.equal(left?.error, "the operator resumed session b");

  await runSlash(`/resume ${first}`, app, io);
  await runSlash("/agents", app, io);
  assert.match(
    io.text(),
    /agent-1 device_search .* cancelled .*\n\s+the operator resumed session b/,
  );
  assert.deepEqual(llm.failures, []);
});
