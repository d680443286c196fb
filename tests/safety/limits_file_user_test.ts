/**
 * The limits file as a console finds it, through the launcher: one that any
 * user of the machine may write (a copy left in /tmp, a `chmod 666`) bounds
 * nothing, and is refused before a plan is checked against it.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

Deno.test("a limits file every user may write is refused in one line before any plan is checked", async () => {
  await using user = await UserSetup.start();
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
  });
  await Deno.chmod(`${user.dir}/limits.toml`, 0o666);
  const shown = await user.run(["plan", "show", file]);
  assert.equal(shown.code, 2, shown.stderr);
  assert.equal(
    shown.stderr,
    `accel-agent: limits error: ${user.dir}/limits.toml: any user may write it (mode 666), so it ` +
      "bounds nothing; make it writable by its owner only (chmod o-w)\n",
  );
  assert.equal(user.writes.length, 0);
  // Group-writable, as a facility's operators' group may keep it: used.
  await Deno.chmod(`${user.dir}/limits.toml`, 0o664);
  const again = await user.run(["plan", "show", file, "--json"]);
  assert.equal(again.code, 0, again.stderr);
});

Deno.test("a limits file in a directory any user may write, without the sticky bit, is refused in one line", async () => {
  await using user = await UserSetup.start();
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
  });
  const open = `${user.dir}/open`;
  await Deno.mkdir(open);
  await Deno.rename(`${user.dir}/limits.toml`, `${open}/limits.toml`);
  const config = await Deno.readTextFile(user.configPath);
  await Deno.writeTextFile(
    user.configPath,
    config.replace('limits_file = "limits.toml"', 'limits_file = "open/limits.toml"'),
  );
  // Any user could rename the file away and put a wider one in its place.
  await Deno.chmod(open, 0o777);
  const shown = await user.run(["plan", "show", file]);
  assert.equal(shown.code, 2, shown.stderr);
  assert.equal(
    shown.stderr,
    `accel-agent: config error: [safety] limits_file ${open}/limits.toml: any user may replace ` +
      `it (its directory ${open} is mode 777 without the sticky bit), so it bounds nothing; make ` +
      "the directory writable by its owner only (chmod o-w)\n",
  );
  assert.equal(user.writes.length, 0);
  // With the sticky bit (as /tmp has), only the file's owner may replace it: used.
  await Deno.chmod(open, 0o1777);
  const again = await user.run(["plan", "show", file, "--json"]);
  assert.equal(again.code, 0, again.stderr);
});
