/** The user-grant harness itself: a plan runs through launch.ts and its write is seen on the wire. */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

Deno.test("a plan approved by the token plan show issues, run through the launcher, writes once on the gateway", async () => {
  await using user = await UserSetup.start();
  const file = await user.file(
    "plan.json",
    JSON.stringify({
      description: "trim H01",
      actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
    }),
  );
  const shown = await user.run(["plan", "show", file, "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  const hash = JSON.parse(shown.stdout).approval.token as string;
  const ran = await user.run(["plan", "run", file, "--approved-hash", hash, "--json"]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(user.writes, [{ pv: "SR:COR:H01:SETPT", value: 0.6 }]);
});
