/**
 * Sessions are saved as they go: the real program is killed in the middle of
 * a turn, and `--resume` continues the same conversation.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { runAgent, tempConfig, waitFor } from "../support/run_agent.ts";
import { call, routed } from "../agent/subagents/harness.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("killing the process mid-session and running --resume continues the same conversation", async () => {
  await using stateDir = await tempDir("accel-agent-state-");
  const state = stateDir.path;
  await using config = await tempConfig(
    `[state]\ndir = "${state}"\n[agent]\nagent_md = ""\n[llm.models]\nmain = "scripted"\n`,
  );
  const env = (url: string) => ({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "k" });

  // First run: the model reads a BPM, then hangs; the process is killed while it waits.
  await using first = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [{ name: "get_parameter", arguments: { devices: ["LINAC:BPM:01:X"] } }],
          },
        },
        { respond: { fault: "stall" } },
      ],
    },
  });
  const killed = await runAgent([
    "--config",
    config.path,
    "ask",
    "--json",
    "Where is the beam at LINAC:BPM:01:X?",
  ], {
    env: env(first.url),
    onSpawn: async (child) => {
      await waitFor(() => first.requests.length === 2, 60_000, "the second model call");
      child.kill("SIGKILL");
    },
  });
  assert.notEqual(killed.code, 0);
  const files = [...Deno.readDirSync(`${state}/sessions`)].map((e) => e.name);
  assert.equal(files.length, 1);
  const id = files[0]?.replace(/\.jsonl$/, "") ?? "";

  // Second run: --resume (the newest) sends the earlier question and tool result along with the new one.
  await using second = await startScriptedLlm({
    scenario: {
      turns: [{
        expect: { userIncludes: "And BPM 02?" },
        respond: { text: "Earlier you asked about BPM 01; BPM 02 is next." },
      }],
    },
  });
  const resumed = await runAgent([
    "--config",
    config.path,
    "ask",
    "--json",
    "--resume",
    "And BPM 02?",
  ], {
    env: env(second.url),
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(second.failures, []);
  const sent = second.requests[0]?.body.messages ?? [];
  assert.deepEqual(sent.filter((m) => m.role === "user").map((m) => m.content), [
    "Where is the beam at LINAC:BPM:01:X?",
    "And BPM 02?",
  ]);
  assert.equal(
    JSON.parse(resumed.stdout).answer,
    "Earlier you asked about BPM 01; BPM 02 is next.",
  );
  // The same session file grew; an explicit ID works too, and an unknown one is a usage error.
  assert.deepEqual([...Deno.readDirSync(`${state}/sessions`)].map((e) => e.name), [`${id}.jsonl`]);
  const unknown = await runAgent(["--config", config.path, "ask", "--resume", "nope", "x"], {
    env: env(second.url),
  });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, new RegExp(`no saved session "nope".*recent: ${id}`));
});

Deno.test("--resume brings back the sub-agents' final results with the conversation", async () => {
  await using stateDir = await tempDir("accel-agent-state-");
  const state = stateDir.path;
  await using config = await tempConfig(
    `[state]\ndir = "${state}"\n[agent]\nagent_md = ""\n[llm.models]\nmain = "scripted"\n`,
  );
  const env = (url: string) => ({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "k" });
  const RESULT = { devices: ["LINAC:GUN:CHARGE"], total: 1, writable: [] };
  await using first = await startScriptedLlm({
    scenario: routed(4, (w) => {
      if (w.agent === "device_search") return call("return", RESULT);
      if (w.step === 0) {
        return call("spawn_subagent", {
          agent: "device_search",
          task: "gun charge",
          background: true,
        });
      }
      if (w.step === 1) return call("agent_status", { id: "agent-1", wait_seconds: 10 });
      return { text: "found it" };
    }),
  });
  const a = await runAgent(["--config", config.path, "ask", "find the gun charge monitor"], {
    env: env(first.url),
  });
  assert.equal(a.code, 0, a.stderr);
  assert.deepEqual(first.failures, []);

  await using second = await startScriptedLlm({
    scenario: {
      turns: [
        { respond: { toolCalls: [{ name: "agent_list", arguments: {} }] } },
        { respond: { text: "{{last_tool_result.agents[0].result.devices[0]}}" } },
      ],
    },
  });
  const b = await runAgent(
    ["--config", config.path, "ask", "--json", "--resume", "which was it?"],
    {
      env: env(second.url),
    },
  );
  assert.equal(b.code, 0, b.stderr);
  const out = JSON.parse(b.stdout);
  assert.equal(out.answer, "LINAC:GUN:CHARGE");
  assert.equal(out.tool_calls[0].result.agents[0].status, "done");
});
