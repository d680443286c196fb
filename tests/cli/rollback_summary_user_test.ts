/**
 * The line above the approval question says when a rollback writes: after
 * the plan, whatever its outcome (a plan that completes runs its rollback
 * too). A plan that only reads, with a rollback that writes, is approved
 * as a user approves it (`plan show`, then `plan run` with its token,
 * through the launcher) on the fake EPICS facility: the screen may not
 * say the write happens only on failure, and the gateway receives it.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

Deno.test("a write only the rollback makes is named as one made after the plan, and the gateway receives it when the plan completes", async () => {
  await using user = await UserSetup.start();
  const plan = await user.plan({
    description: "read the orbit",
    actions: [{ type: "read", devices: ["SR:BPM:01:X"] }],
    rollback: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.9, reason: "put back" }],
  });
  const shown = await user.run(["plan", "show", plan]);
  assert.equal(shown.code, 0, shown.stderr);
  const lines = shown.stdout.split("\n");
  const summary = lines[lines.findIndex((l) => l.startsWith("approval token")) - 1] ?? "";
  assert.equal(
    summary,
    "After the plan, whatever its outcome, its rollback writes SR:COR:H01:SETPT.",
  );
  assert.doesNotMatch(shown.stdout, /on failure/i);
  const token = await user.token(plan);
  const run = await user.run(["plan", "run", plan, "--approved-hash", token, "--json"]);
  assert.equal(JSON.parse(run.stdout).status, "completed", run.stdout);
  assert.deepEqual(user.writes, [{ pv: "SR:COR:H01:SETPT", value: 0.9 }]);
});
