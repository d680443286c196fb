/**
 * The config files of the chain as a console finds them, through the
 * launcher: one that any user of the machine may write, or one in a directory
 * any user may write without the sticky bit, could name hooks, data
 * directories or a wider limits file for whoever runs the program, and is
 * refused in one line before anything is granted.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

Deno.test("a config file any user may write, the operator's or one it extends, is refused by the launcher in one line", async () => {
  await using user = await UserSetup.start();
  await Deno.chmod(user.configPath, 0o666);
  const own = await user.run(["get", "SR:COR:H01:SETPT"]);
  assert.equal(own.code, 2, own.stderr);
  assert.equal(
    own.stderr,
    `accel-agent: config error: ${user.configPath} (the config file): any user may write it ` +
      "(mode 666), so any of them could change what the program may do; make it writable by its " +
      "owner only (chmod o-w)\n",
  );
  await Deno.chmod(user.configPath, 0o644);
  const base = await user.file("base.toml", '[ui]\ncolor = "never"\n');
  await Deno.writeTextFile(
    user.configPath,
    `extends = "base.toml"\n${await Deno.readTextFile(user.configPath)}`,
  );
  await Deno.chmod(base, 0o646);
  const layer = await user.run(["get", "SR:COR:H01:SETPT"]);
  assert.equal(layer.code, 2, layer.stderr);
  assert.match(
    layer.stderr,
    /^accel-agent: config error: .*base\.toml \(a config file it extends\): any user may write it \(mode 646\)/,
  );
  // Group-writable, as a facility's operators' group may keep it: used.
  await Deno.chmod(base, 0o664);
  const read = await user.run(["get", "SR:COR:H01:SETPT"]);
  assert.equal(read.code, 0, read.stderr);
});

Deno.test("a config file in a directory any user may write without the sticky bit is refused by the launcher", async () => {
  await using user = await UserSetup.start();
  await Deno.chmod(user.dir, 0o777);
  const r = await user.run(["get", "SR:COR:H01:SETPT"]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    `accel-agent: config error: ${user.configPath} (the config file): any user may replace it ` +
      `(its directory ${user.dir} is mode 777 without the sticky bit), so any of them could ` +
      "change what the program may do; make the directory writable by its owner only (chmod o-w)\n",
  );
  await Deno.chmod(user.dir, 0o1777);
  const sticky = await user.run(["get", "SR:COR:H01:SETPT"]);
  assert.equal(sticky.code, 0, sticky.stderr);
  await Deno.chmod(user.dir, 0o700);
});
