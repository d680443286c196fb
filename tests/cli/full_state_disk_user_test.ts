/**
 * A state directory whose disk is full, under a user's real grants (a small
 * tmpfs, mounted as root; skipped where mounting is refused): the index
 * cache, a plan run and a plan the model proposes each fail in one line that
 * says why (no space), write nothing to the machine, and leave no temporary
 * file behind to fill the disk further; a shift summary that cannot be saved
 * is printed, not lost.
 */
import assert from "node:assert/strict";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { runAsUser, UserSetup } from "../support/user_grants.ts";
import { ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const H01 = "SR:COR:H01:SETPT";

/** Every file below `dir` whose name ends in `.tmp`. */
function temps(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...temps(path));
    else if (e.name.endsWith(".tmp")) out.push(path);
  }
  return out;
}

Deno.test({
  name:
    "with the state disk full, index refresh, plan run and a proposed plan each say no space in one line and leave no temporary file",
  ignore: !(await canMount()),
  fn: async () => {
    await using user = await UserSetup.start();
    const unmount = await mountTmpfs(user.stateDir, "512k");
    try {
      await using llm = await startScriptedLlm({
        scenario: {
          turns: [
            {
              respond: {
                toolCalls: [{
                  name: "propose_plan",
                  arguments: {
                    description: "trim",
                    actions: [{ type: "write", device: H01, value: 0.3, reason: "trim" }],
                  },
                }],
              },
            },
            { respond: { text: "The plan could not be kept." } },
          ],
        },
      });
      // Keys and a first audit entry exist, as on a console that has been used.
      const look = await user.plan({
        description: "look",
        actions: [{ type: "read", devices: [H01] }],
      });
      assert.equal(
        (await user.run(["plan", "run", look, "--approved-hash", await user.token(look)])).code,
        0,
      );
      const trim = await user.plan({
        description: "trim",
        actions: [{ type: "write", device: H01, value: 0.3, reason: "trim" }],
      }, "trim.json");
      const token = await user.token(trim);
      await fill(user.stateDir);

      const index = await user.run(["index", "refresh"]);
      assert.equal(index.code, 1);
      assert.match(
        index.stderr.trim(),
        /^accel-agent: the device index could not be refreshed: No space left on device \(os error 28\)/,
      );

      const run = await user.run(["plan", "run", trim, "--approved-hash", token, "--json"]);
      assert.equal(run.code, 1, run.stderr);
      const out = JSON.parse(run.stdout);
      assert.equal(out.status, "audit_failed");
      assert.match(out.errors.join("\n"), /No space left on device/);
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);

      const asked = await user.run(["ask", "--json", "trim H01"], {
        env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" },
      });
      const call = JSON.parse(asked.stdout).tool_calls[0];
      assert.equal(call.name, "propose_plan");
      assert.match(
        call.result.error,
        /the plan could not be saved in \S+\/plans \(No space left on device \(os error 28\)\)$/,
      );

      assert.deepEqual(user.writes, [], "something was written to the machine");
      assert.deepEqual(temps(user.stateDir), [], "a temporary file was left behind");
    } finally {
      await unmount();
    }
  },
});

Deno.test({
  name:
    "with the state disk full, elog shift prints the summary it could not save and says so in one line",
  ignore: !(await canMount()),
  fn: async () => {
    await using dir = await tempDir();
    const state = `${dir.path}/state`;
    const config = `${dir.path}/config.toml`;
    await Deno.writeTextFile(config, `[state]\ndir = ${JSON.stringify(state)}\n`);
    const unmount = await mountTmpfs(state, "256k");
    try {
      await fill(state);
      const run = (args: string[]) => runAsUser(["--config", config, ...args]);

      const human = await run(["elog", "shift"]);
      assert.equal(human.code, 1, human.stderr);
      assert.match(human.stdout, /^Shift summary/m, "the summary is printed, not lost");
      const lines = human.stderr.trim().split("\n");
      assert.equal(lines.length, 1, human.stderr);
      assert.match(
        lines[0] ?? "",
        /^accel-agent: cannot save the logbook draft \S+ \(No space left on device.*\); the summary is printed above, not saved$/,
      );
      assert.doesNotMatch(human.stderr, /internal error/);

      const json = await run(["elog", "shift", "--json"]);
      assert.equal(json.code, 1, json.stderr);
      const out = JSON.parse(json.stdout);
      assert.equal(out.status, "not_saved");
      assert.match(out.draft.title, /^Shift summary/);
      assert.ok(out.draft.body.length > 0);
      assert.match(out.error, /No space left on device/);
      assert.deepEqual(temps(state), [], "a temporary file was left behind");
    } finally {
      await unmount();
    }
  },
});

Deno.test({
  name:
    "a token whose use cannot be recorded (a full disk) is not spent, as the program says: it runs its plan once there is room",
  ignore: !(await canMount()),
  fn: async () => {
    await using dir = await tempDir();
    const state = `${dir.path}/state`;
    const config = `${dir.path}/config.toml`;
    await Deno.writeTextFile(
      config,
      `[state]\ndir = ${JSON.stringify(state)}\n[safety]\nlimits_file = ${
        JSON.stringify(`${ROOT}/configs/safety_limits.toml`)
      }\n`,
    );
    const plan = `${dir.path}/trim.json`;
    await Deno.writeTextFile(
      plan,
      JSON.stringify({
        description: "trim",
        actions: [{ type: "write", device: "LINAC:COR:H02:SETPT", value: 0.05, reason: "trim" }],
      }),
    );
    const run = (args: string[]) => runAsUser(["--config", config, ...args]);
    const token = JSON.parse((await run(["plan", "show", plan, "--json"])).stdout).approval.token;
    // Only the record of used tokens is out of room: the audit and the run marker are written.
    const used = `${state}/approvals/used`;
    const unmount = await mountTmpfs(used, "8k");
    try {
      await fill(used);
      const refused = await run(["plan", "run", plan, "--approved-hash", token, "--json"]);
      assert.equal(refused.code, 1, refused.stderr);
      const out = JSON.parse(refused.stdout);
      assert.match(JSON.stringify(out), /the token.s use cannot be recorded \(No space/);
      assert.match(JSON.stringify(out), /the approval token was not spent/);
      assert.deepEqual(temps(used), []);
      await Deno.remove(`${used}/filler`);
      const ran = await run(["plan", "run", plan, "--approved-hash", token, "--json"]);
      assert.equal(ran.code, 0, ran.stderr + ran.stdout);
      assert.equal(JSON.parse(ran.stdout).status, "completed");
    } finally {
      await unmount();
    }
  },
});
