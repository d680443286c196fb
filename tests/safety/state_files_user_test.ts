/**
 * Key, head, lock and used-token files of the state directory replaced by
 * what is not a file
 * (a FIFO, which blocks whoever opens it; a link to /dev/zero, which never
 * ends), as a user runs the program (the launcher, the config's grants) on
 * the fake EPICS facility: each command says so in one line and ends,
 * writing nothing — no hang, no read without end, no stack trace.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

async function fifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success, "mkfifo");
}

const NOT_A_FILE: [string, (path: string) => Promise<void>][] = [
  ["a FIFO", fifo],
  ["a link to /dev/zero", (path) => Deno.symlink("/dev/zero", path)],
];

for (const [what, make] of NOT_A_FILE) {
  for (const file of ["keys/approval.key", "keys/audit.key", "audit.head", "audit/.lock", "USED"]) {
    Deno.test(`${file} replaced by ${what}: plan show, plan run and audit verify end with one line and write nothing`, async () => {
      await using user = await UserSetup.start();
      const plan = await user.plan({
        description: "trim",
        actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
      });
      const token = await user.token(plan);
      // A first run makes the audit, its key and its head.
      await user.run(["plan", "show", plan, "--reusable"]);
      // USED: the used-token record of this very token, planted before the token is used.
      const name = file === "USED" ? `approvals/used/${token.split(".")[4]}` : file;
      const path = `${user.stateDir}/${name}`;
      await Deno.mkdir(`${user.stateDir}/approvals/used`, { recursive: true });
      await Deno.remove(path).catch(() => {});
      await make(path);
      const commands = [
        ["plan", "run", plan, "--approved-hash", token],
        ["plan", "show", plan],
        ["audit", "verify"],
      ];
      for (const args of commands) {
        const r = await user.run(args, { ceilingMs: 60_000 });
        const out = `${r.stdout}\n${r.stderr}`;
        assert.doesNotMatch(out, /the test killed the program/, `${args[1]} hung`);
        assert.doesNotMatch(out, /^\s+at |internal error/m, out);
        if (r.code !== 0) {
          assert.match(
            r.stderr,
            new RegExp(`${name.replaceAll(".", "\\.")}.*not a regular file`),
            out,
          );
        }
      }
      assert.deepEqual(user.writes, []);
    });
  }
}

for (const [what, make] of NOT_A_FILE) {
  Deno.test(`the limits file replaced by ${what}: every command says so in one line and ends`, async () => {
    await using user = await UserSetup.start();
    const path = `${user.dir}/limits.toml`;
    await Deno.remove(path);
    await make(path);
    const r = await user.run(["get", "SR:COR:H01:SETPT"], { ceilingMs: 60_000 });
    assert.doesNotMatch(r.stderr, /the test killed the program/, "hung");
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr.trim(),
      /^accel-agent: limits error: .*limits\.toml: is (a FIFO|a character device).*not a regular file; point \[safety\] limits_file at the limits file$/,
    );
  });
}
