import assert from "node:assert/strict";
import { loadSkills } from "../../src/app/skill_wiring.ts";
import { CliError } from "../../src/app/exit.ts";
import { parsePlan } from "../../src/plan_model/plan.ts";
import { matchSkills, parseSkill } from "../../src/skills/skill.ts";
import { fixture } from "../plan/fixture.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { runAgent, tempConfig } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const SKILLS_DIR = new URL("../../configs/skills/", import.meta.url).pathname;

Deno.test("the shipped skills trigger on the operator's words and not on others", async () => {
  const skills = await loadSkills([SKILLS_DIR]);
  assert.deepEqual(skills.map((s) => s.name), ["orbit_response", "rf_trip", "shift_summary"]);
  const table: [string, string[]][] = [
    ["Can you write the shift summary for the owl?", ["shift_summary"]],
    ["What happened last night?", ["shift_summary"]],
    ["Summarise the swing shift please", ["shift_summary"]],
    ["I need handover notes", ["shift_summary"]],
    ["Measure the orbit response of RING:COR:H05", ["orbit_response"]],
    ["let's do an ORM on the ring", ["orbit_response"]],
    ["do a corrector kick on V03 and see the BPMs", ["orbit_response"]],
    ["RF station 3 tripped again", ["rf_trip"]],
    ["why did the RF trip at 03:00?", ["rf_trip"]],
    ["reflected power on STN:03 is climbing", ["rf_trip"]],
    ["we lost beam ten minutes ago", ["rf_trip"]],
    ["What is the beam current?", []],
    ["show me the ORMOLU catalogue", []],
    ["read RF:PHASE:SETPT", []],
  ];
  for (const [input, names] of table) {
    assert.deepEqual(matchSkills(skills, [input]).map((s) => s.name), names, input);
  }
});

Deno.test("a skill file without triggers, with a bad regex or no workflow is refused", async () => {
  const table: [string, RegExp][] = [
    ["---\nname: x\ndescription: d\n---\nbody", /"triggers" must list/],
    ['---\nname: x\ndescription: d\ntriggers: ["(unclosed"]\n---\nbody', /trigger \/\(unclosed\//],
    ["---\nname: x\ndescription: d\ntriggers: [a]\n---\n", /workflow .* is empty/],
    ["---\nname: X Y\ndescription: d\ntriggers: [a]\n---\nb", /"name" must be/],
  ];
  for (const [text, error] of table) assert.throws(() => parseSkill(text, "S.md"), error);
  await using dir = await tempDir();
  await Deno.mkdir(`${dir.path}/bad`);
  await Deno.writeTextFile(`${dir.path}/bad/SKILL.md`, "---\nname: bad\n---\nx");
  await assert.rejects(loadSkills([dir.path]), (e) => e instanceof CliError && e.code === 2);
});

Deno.test("the orbit response skill's plan template passes preflight on the simulator with the shipped limits", async () => {
  const text = await Deno.readTextFile(`${SKILLS_DIR}/orbit_response/SKILL.md`);
  const json = /```json\n([\s\S]*?)\n```/.exec(text)?.[1];
  assert.ok(json, "the skill has a JSON plan template");
  const parsed = parsePlan(JSON.parse(json));
  assert.ok(parsed.ok, JSON.stringify(parsed));
  await using f = await fixture();
  const { service } = f;
  const checked = await service.check(parsed.plan);
  assert.deepEqual(checked.violations, []);
  assert.equal(checked.ok, true);
  assert.equal(checked.scanPoints, 5);
});

Deno.test("a matching question puts the skill's workflow into the system prompt; another does not", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        { expect: { systemIncludes: "# Skill: rf_trip" }, respond: { text: "checking" } },
        { respond: { text: "300 mA" } },
      ],
    },
  });
  await using config = await tempConfig(
    `[agent]\nagent_md = ""\n[llm.models]\nmain = "scripted"\n`,
  );
  const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" };
  const a = await runAgent(["--config", config.path, "ask", "RF station 3 tripped, why?"], { env });
  assert.equal(a.code, 0, a.stderr);
  const b = await runAgent(["--config", config.path, "ask", "What is the beam current?"], { env });
  assert.equal(b.code, 0, b.stderr);
  assert.deepEqual(llm.failures, []);
  const system = String(llm.requests[1]?.body.messages[0]?.content);
  assert.ok(!system.includes("# Skill:"), "no skill for an unrelated question");
});
