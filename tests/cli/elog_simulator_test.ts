/**
 * On the simulator, through the launcher: `ask --json` carries the draft of
 * the plan its turn ran and never posts it (a hostile model's summary stays
 * fenced, escaped and cut); `elog post` then files it in the simulator's own
 * logbook, where `logs elog` and the model's `read_log` find it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { tempDir } from "../support/temp.ts";
import { runAsUser } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DEVICE = "LINAC:COR:H01:SETPT";

// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

Deno.test("ask --json carries the draft and never posts it; elog post files it where logs elog and read_log see it", async () => {
  await using tmp = await tempDir();
  const state = `${tmp.path}/state`;
  const config = `${tmp.path}/config.toml`;
  await Deno.writeTextFile(
    config,
    `[state]\ndir = ${JSON.stringify(state)}\n\n[safety]\nlimits_file = ${
      JSON.stringify(`${ROOT}configs/safety_limits.toml`)
    }\n\n[sandbox]\nwork_dir = ${JSON.stringify(`${tmp.path}/work`)}\nprewarm = false\n\n` +
      `[profile]\nname = "sim-eval"\nauto_approve = true\n\n` +
      // A megabyte of text streams as many small events: room for it, so the cap under test is ours.
      `[llm]\nmax_response_bytes = 134217728\n`,
  );
  const run = (args: string[], env: Record<string, string> = {}) =>
    runAsUser(["--config", config, ...args], { env });
  const got = await run(["get", DEVICE, "--json"]);
  assert.equal(got.code, 0, got.stderr);
  const before = JSON.parse(got.stdout).readings[0].value as number;
  const hostile = [
    "Done.\x1b[2J\x1b]52;c;ZXZpbA==\x07",
    `| \`${DEVICE}\` | ${before} | 1.9 | 1.9 | \`LINAC:COR:H01:RDBK\` | no |`,
    "```",
    "x".repeat(1_000_000),
  ].join("\n");
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [{
              name: "propose_plan",
              arguments: {
                description: "Trim H01",
                actions: [{ type: "write", device: DEVICE, value: before + 0.05, reason: "trim" }],
              },
            }],
          },
        },
        { expect: { toolResultIncludes: ['"status":"completed"'] }, respond: { text: hostile } },
        {
          respond: {
            toolCalls: [{ name: "read_log", arguments: { source: "elog", from: "-1h" } }],
          },
        },
        {
          expect: { toolResultIncludes: ["Plan completed: Trim H01"] },
          respond: { text: "The logbook has it." },
        },
      ],
    },
  });
  const model = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" };

  const asked = await run(["ask", "--json", "trim H01 a little"], model);
  assert.equal(asked.code, 0, `${asked.stderr}${JSON.stringify(JSON.parse(asked.stdout).error)}`);
  const out = JSON.parse(asked.stdout);
  assert.equal(out.elog_drafts.length, 1);
  const [draft] = out.elog_drafts;
  assert.equal(draft.status, "pending");
  assert.match(draft.body, new RegExp(`\\| \`${DEVICE}\` \\| ${before} \\| ${before + 0.05} \\|`));
  assert.match(draft.body, /\*\*Question:\*\* trim H01 a little/);
  const [facts, summary] = draft.body.split("**Summary by the model**");
  assert.ok(summary, "the model's words are marked as its own");
  assert.doesNotMatch(facts, /1\.9/);
  assert.doesNotMatch(draft.body, RAW_CONTROL);
  assert.match(summary, /\\x1b\[2J\\x1b\]52;c;ZXZpbA==\\x07/);
  assert.ok(draft.body.length < 6000, `${draft.body.length} characters`);
  // Never posted: nothing in the simulator's logbook, nothing in the audit about it.
  const listed = await run(["logs", "elog", "--from", "-1h", "--json"]);
  assert.ok(!listed.stdout.includes("Plan completed: Trim H01"));
  assert.deepEqual((await auditEntries(state)).filter((e) => e.decision.startsWith("elog")), []);

  // A draft file written by someone else, with raw escapes in it: shown escaped.
  const planted = `${tmp.path}/planted.json`;
  await Deno.writeTextFile(
    planted,
    JSON.stringify({
      ...JSON.parse(await Deno.readTextFile(draft.path)),
      id: crypto.randomUUID(),
      title: "Plan completed\x1b]0;pwned\x07",
      body: "\x1b[2J\x1b[Hall restored\r| fake | row |\u202e\n",
    }),
  );
  const shown = await run(["elog", "show", planted]);
  assert.equal(shown.code, 0, shown.stderr);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(shown.stdout, /[\x1b\x07\r\u202e]/);
  assert.match(shown.stdout, /Plan completed\\x1b\]0;pwned\\x07/);
  assert.match(shown.stdout, /\\x1b\[2J\\x1b\[Hall restored\\r\| fake \| row \|\\u\{202e\}/);
  const list = JSON.parse((await run(["elog", "list", "--json"])).stdout);
  assert.deepEqual(list.drafts.map((d: { id: string }) => d.id), [draft.id], "shown, not taken in");

  const posted = await run(["elog", "post", draft.id]);
  assert.equal(posted.code, 0, posted.stderr);
  assert.match(posted.stdout, /posted to the simulator's logbook \(.*\) as entry sim-1/);
  const logs = JSON.parse((await run(["logs", "elog", "--from", "-1h", "--json"])).stdout);
  const entry = logs.entries.find((e: { title: string }) => e.title === "Plan completed: Trim H01");
  assert.ok(entry, JSON.stringify(logs.entries.map((e: { title: string }) => e.title)));
  assert.deepEqual(entry.devices, [DEVICE]);

  const read = await run(["ask", "--json", "what changed in the last hour?"], model);
  assert.equal(read.code, 0, read.stderr);
  assert.deepEqual(llm.failures, []);
  const call = JSON.parse(read.stdout).tool_calls[0];
  assert.equal(call.name, "read_log");
  assert.ok(
    call.result.entries.some((e: { title: string }) => e.title === "Plan completed: Trim H01"),
  );
});
