/**
 * A hostile model's fan-out against the program as a user runs it (through
 * the launcher, under the config's real grants): one message of 5,000 tool
 * calls of each kind, and sub-agents that answer every request with 5,000
 * spawns. The process stays within a few hundred MB, opens at most the
 * capped number of displays, makes at most the tree's budget of sub-agent
 * model requests, and says what it refused.
 */
import assert from "node:assert/strict";
import { programPid, UserSetup } from "../support/user_grants.ts";
import { type ChatRequest, type Respond, startScriptedLlm } from "../support/scripted_llm.ts";
import { who } from "../agent/subagents/harness.ts";

const EACH = 5_000;
const DISPLAYS = ["orbit", "rf", "vacuum", "magnets"];
const TREE_TURNS = 12;

/** Every kind of call the operator's agent has that reads, 5,000 of each, interleaved. */
function operatorFlood(): Respond {
  const kinds = [
    (i: number) => ({ name: "launch_display", arguments: { display: DISPLAYS[i % 4] } }),
    (i: number) => ({
      name: "spawn_subagent",
      arguments: { agent: "device_search", task: `find ${i}`, background: i % 2 === 0 },
    }),
    () => ({ name: "get_parameter", arguments: { devices: ["SR:COR:H01:SETPT"] } }),
    () => ({ name: "search_device", arguments: { pattern: "SR:*" } }),
    () => ({ name: "read_log", arguments: { source: "elog", from: "-1h" } }),
    () => ({ name: "agent_list", arguments: {} }),
  ];
  return {
    toolCalls: Array.from({ length: EACH * kinds.length }, (_, i) => {
      const make = kinds[i % kinds.length] as (i: number) => Respond & object;
      return make(Math.floor(i / kinds.length)) as { name: string; arguments: object };
    }) as { name: string; arguments: Record<string, unknown> }[],
    chunkSize: 1 << 16,
  };
}

/** A sub-agent that spawns 5,000 more every time it is asked anything. */
function subagentFlood(): Respond {
  return {
    toolCalls: Array.from({ length: EACH }, (_, i) => ({
      name: "spawn_subagent",
      arguments: { agent: "device_search", task: `deeper ${i}` },
    })),
    chunkSize: 1 << 16,
  };
}

/** The peak resident memory of `pid` (VmHWM), in MiB, read until it exits. */
function watchPeak(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  let on = true;
  const polling = (async () => {
    while (on) {
      try {
        const status = await Deno.readTextFile(`/proc/${pid}/status`);
        const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
        peak = Math.max(peak, kb / 1024);
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await polling;
      return peak;
    },
  };
}

Deno.test("5,000 tool calls of each kind in one message: bounded memory, capped programs and model requests, and the program says so", async () => {
  const extra = `
[llm]
max_response_bytes = 67108864

[agents]
max_tree_turns = ${TREE_TURNS}

[sandbox]
prewarm = false
spare_processes = 0

[launchers.phoebus]
command = ["launch.sh", "-resource", "{file}?{macros}"]

${DISPLAYS.map((d) => `[[displays]]\nname = "${d}"\nfile = "${d}.bob"\n`).join("\n")}
`;
  await using user = await UserSetup.start({ extra });
  const launched = `${user.dir}/launched.txt`;
  await user.file("launch.sh", `#!/bin/sh\necho "$*" >> "${launched}"\n`);
  await Deno.chmod(`${user.dir}/launch.sh`, 0o755);
  let operatorAsked = 0;
  await using llm = await startScriptedLlm({
    scenario: {
      loop: true,
      turns: [(req: ChatRequest) => {
        if (who(req).agent !== "parent") return subagentFlood();
        return operatorAsked++ === 0 ? operatorFlood() : { text: "I asked for too much." };
      }],
    },
  });
  let peak: Promise<number> | undefined;
  const r = await user.run(["ask", "--json", "Check everything at once."], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    ceilingMs: 600_000,
    onSpawn: async (child) => {
      const watch = watchPeak(await programPid(child));
      await child.status;
      peak = watch.stop();
    },
  });
  const mib = (await peak) ?? 0;
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, true, r.stderr);
  // It says so: the refused calls, in the result a script reads.
  assert.deepEqual(
    out.tool_calls_refused.map((x: { cap: string; count: number }) => [x.cap, x.count]),
    [
      ["per_message", 6 * EACH - 20],
    ],
  );
  assert.equal(out.tool_calls.length, 20);
  // Programs: at most the turn's display launches, each display once.
  const lines = (await Deno.readTextFile(launched).catch(() => "")).trim().split("\n");
  assert.ok(lines.length <= 3, `${lines.length} displays opened`);
  assert.equal(new Set(lines).size, lines.length, "no display opened twice");
  // Model requests: the operator's two, and at most the tree's budget for every sub-agent.
  const bySubagents = llm.requests.filter((q) => who(q.body).agent !== "parent").length;
  assert.equal(llm.requests.length - bySubagents, 2);
  assert.ok(bySubagents <= TREE_TURNS, `${bySubagents} sub-agent requests, budget ${TREE_TURNS}`);
  // The spawns past the budget say why they did not start.
  const spawns = out.tool_calls.filter((c: { name: string }) => c.name === "spawn_subagent");
  assert.ok(spawns.length > 0);
  // Memory: the hostile messages were parsed, not kept.
  assert.ok(mib > 0 && mib < 400, `peak resident memory ${mib.toFixed(0)} MiB`);
  console.log(`peak resident memory ${mib.toFixed(0)} MiB; ${bySubagents} sub-agent requests`);
});
