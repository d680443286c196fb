/**
 * `plan recover RUN` when the facility cannot be asked: a device that
 * cannot be read is not said to read its original, the run stays open, and
 * the command ends in a line that says what to do (exit 1), never a stack
 * trace. Run as a user runs the program, on the fake EPICS gateway.
 */
import assert from "node:assert/strict";
import { waitFor } from "../support/run_agent.ts";
import { programPid, UserSetup, writeThenHold } from "../support/user_grants.ts";

Deno.test("plan recover with the gateway gone leaves the run open and says so in one line, exit 1", async () => {
  await using user = await UserSetup.start();
  const file = await user.plan(writeThenHold(0.6));
  const token = await user.token(file);
  await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    onSpawn: async (launcher) => {
      await waitFor(() => user.writes.length === 1, 60_000, "the plan's write");
      Deno.kill(await programPid(launcher), "SIGKILL");
    },
  });
  const listed = JSON.parse((await user.run(["plan", "recover", "--json"])).stdout);
  const run = listed.unfinished[0]?.run as string;
  assert.ok(run, "the killed plan is unfinished");
  await user.epics.pvws.close();

  const r = await user.run(["plan", "recover", run]);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "", "nothing claimed on stdout");
  const lines = r.stderr.trim().split("\n");
  assert.deepEqual(lines.length, 1, r.stderr);
  assert.match(
    lines[0] ?? "",
    new RegExp(
      `^accel-agent: run ${run} stays open: SR:COR:H01:SETPT: it cannot be read .*; nothing was ` +
        `written\\. Try again when its devices can be read, or check them by hand, then: ` +
        `accel-agent plan recover ${run} --dismiss$`,
    ),
  );
  assert.doesNotMatch(r.stderr, /internal error|^\s+at /m);
  const json = await user.run(["plan", "recover", run, "--json"]);
  assert.equal(json.code, 1);
  assert.equal(JSON.parse(json.stdout).status, "still_open");
  // Still open: the next listing has it, and the audit has no outcome for it.
  const again = JSON.parse((await user.run(["plan", "recover", "--json"])).stdout);
  assert.deepEqual(again.unfinished.map((m: { run: string }) => m.run), [run]);
});
