/**
 * A plan file that is not a file, as an operator's script might hand it
 * (the launcher, the config's grants, the fake EPICS facility): a FIFO,
 * which blocks whoever opens it, or /dev/zero, which never ends, is one
 * line naming it, exit 2, and nothing is written.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

for (const what of ["a FIFO", "/dev/zero"]) {
  Deno.test(`a plan file that is ${what} is refused in one line: plan show and plan run end, nothing written`, async () => {
    await using user = await UserSetup.start();
    let path = "/dev/zero";
    if (what === "a FIFO") {
      path = `${user.dir}/plan.json`;
      assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
    }
    for (const args of [["plan", "show", path], ["plan", "run", path, "--approved-hash", "x"]]) {
      const r = await user.run(args, { ceilingMs: 60_000 });
      assert.doesNotMatch(r.stderr, /the test killed the program/, `${args[1]} hung`);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr.trim(),
        /^accel-agent: .*: is (a FIFO|a character device).*not a regular file; give a plan file \(\.json or \.toml\)$/,
      );
    }
    assert.deepEqual(user.writes, []);
  });
}
