/**
 * One replay endpoint serves any number of `eval --replay` runs: a
 * transcript played to its end starts again for the next run, so a script
 * that runs the eval twice against one server gets two full reports, not
 * "no turns left" the second time.
 */
import assert from "node:assert/strict";
import { startScriptedEval } from "../support/scripted_eval_server.ts";
import { shippedTasks } from "../eval/scripted_model.ts";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS } from "../support/user_grants.ts";

Deno.test("two eval --replay runs against one replay server both pass every attempt", async () => {
  await using replay = await startScriptedEval(await shippedTasks(), "solving");
  for (const run of [1, 2]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...LAUNCHER_FLAGS,
        `${ROOT}/launch.ts`,
        "eval",
        "--replay",
        "--tasks",
        "read-ring-current,read-tunes",
        "--repeat",
        "2",
        "--json",
      ],
      cwd: ROOT,
      clearEnv: true,
      env: childEnv({ OPENAI_BASE_URL: replay.url }),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `run ${run}: ${stderr}`);
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.deepEqual([report.total.passes, report.total.attempts], [4, 4], `run ${run}`);
  }
  assert.deepEqual(replay.failures(), []);
});
