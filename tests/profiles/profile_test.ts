import assert from "node:assert/strict";
import { call } from "../agent/subagents/harness.ts";
import { type ProfileName, profileRefusal, PROFILES } from "../../src/profiles/profile.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { runAgent, tempConfig } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("profile rules: automatic approval only for sim-eval on the simulator; sim-eval only on the simulator", () => {
  // [profile, adapter, auto_approve, refused because…]
  const table: [ProfileName, string, boolean, RegExp | null][] = [
    ["observer", "simulator", false, null],
    ["observer", "epics", false, null],
    ["observer", "tango", false, null],
    ["observer", "simulator", true, /observer profile never approves plans automatically/],
    ["operator", "simulator", false, null],
    ["operator", "epics", false, null],
    ["operator", "tango", false, null],
    ["operator", "simulator", true, /operator profile never approves plans automatically/],
    ["operator", "epics", true, /automatic approval on a real machine \(adapter "epics"\)/],
    ["sim-eval", "simulator", false, null],
    ["sim-eval", "simulator", true, null],
    ["sim-eval", "epics", false, /runs on the simulator only, not on adapter "epics"/],
    ["sim-eval", "epics", true, /automatic approval on a real machine \(adapter "epics"\)/],
    ["sim-eval", "tango", true, /automatic approval on a real machine \(adapter "tango"\)/],
  ];
  for (const [profile, adapter, autoApprove, refused] of table) {
    const why = profileRefusal({ profile, adapter, autoApprove });
    const label = `${profile} on ${adapter}, auto_approve ${autoApprove}`;
    if (refused) assert.match(why ?? "", refused, label);
    else assert.equal(why, undefined, label);
  }
  assert.deepEqual(
    Object.values(PROFILES).map((p) => [p.name, p.plans, p.sandboxWrites]),
    [["observer", false, false], ["operator", true, true], ["sim-eval", true, true]],
  );
});

const LIMITS = new URL("../../configs/safety_limits.toml", import.meta.url).pathname;
const MODEL = `[agent]\nagent_md = ""\n[llm.models]\nmain = "scripted"\n`;

Deno.test("a profile allowing automatic approval on a real machine adapter is refused at start-up with exit 2", async () => {
  for (const adapter of ["epics", "tango"]) {
    await using config = await tempConfig(
      `${MODEL}[facility]\nadapter = "${adapter}"\n[profile]\nname = "sim-eval"\nauto_approve = true\n`,
    );
    const r = await runAgent(["--config", config.path, "search", "RING:BPM:*"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`automatic approval on a real machine \\(adapter "${adapter}"\\) is refused`),
    );
  }
  await using config = await tempConfig(`${MODEL}[facility]\nadapter = "epics"\n`);
  const r = await runAgent(["--config", config.path, "--profile", "sim-eval", "search", "X"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /sim-eval profile runs on the simulator only/);
  const unknown = await runAgent(["--config", config.path, "--profile", "admin", "search", "X"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown profile "admin"; profiles: observer, operator, sim-eval/);
});

Deno.test("the observer is never offered propose_plan and cannot run a plan file", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        expect: { toolsExclude: ["propose_plan"], toolsInclude: ["get_parameter"] },
        respond: { text: "ok" },
      }],
    },
  });
  await using config = await tempConfig(`${MODEL}[profile]\nname = "observer"\n`);
  const r = await runAgent(["--config", config.path, "ask", "hello"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(llm.failures, []);
  const plan = await runAgent(["--config", config.path, "plan", "run", "whatever.toml"]);
  assert.equal(plan.code, 2);
  assert.match(plan.stderr, /observer profile runs no plans/);
});

Deno.test("sim-eval with auto_approve runs a plan that passes preflight on the simulator without a prompt", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: call("propose_plan", {
            // 0.001 mrad: 0.01 would move the photon BPMs past MAJOR, and preflight refuses it.
            description: "Nudge H02 by 0.001 mrad",
            actions: [{
              type: "write",
              device: "RING:COR:H02:SETPT",
              value: 0.0151,
              reason: "test",
            }],
          }),
        },
        { respond: { text: "{{last_tool_result.status}}" } },
      ],
    },
  });
  await using state = await tempDir();
  await using config = await tempConfig(
    `${MODEL}[state]\ndir = "${state.path}"\n[safety]\nlimits_file = "${LIMITS}"\n[profile]\nname = "sim-eval"\nauto_approve = true\n`,
  );
  const r = await runAgent(["--config", config.path, "ask", "--json", "nudge H02"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.answer, "completed", JSON.stringify(out.tool_calls[0]?.result));
  assert.equal(out.plans[0].decision, "approved");
});
