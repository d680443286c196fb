/**
 * A plan whose process is killed (SIGKILL: nothing runs after it) leaves
 * the machine changed. Its originals were recorded before its first write,
 * so the next command says so, and `plan recover` puts the device back
 * through a plan the operator approves like any other. Run as a user runs
 * the program, on the fake EPICS gateway, which sees every write.
 */
import assert from "node:assert/strict";
import { waitFor } from "../support/run_agent.ts";
import {
  programPid,
  type UserSetup,
  UserSetup as Setup,
  writeThenHold,
} from "../support/user_grants.ts";
import { AuditLog } from "../../src/safety/audit.ts";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";

const H01 = "SR:COR:H01:SETPT";

/** Starts a plan that writes H01 and waits, and kills its program with SIGKILL after the write. */
async function killedMidPlan(user: UserSetup, value = 0.6): Promise<void> {
  const file = await user.plan(writeThenHold(value));
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    onSpawn: async (launcher) => {
      await waitFor(() => user.writes.length === 1, 60_000, "the plan's write");
      Deno.kill(await programPid(launcher), "SIGKILL");
    },
  });
  assert.notEqual(ran.code, 0);
  assert.equal(ran.stdout, "", "a killed program prints nothing");
}

async function auditEntries(user: UserSetup): Promise<Record<string, unknown>[]> {
  const log = new AuditLog(`${user.stateDir}/audit`);
  const text = (await Promise.all((await log.files()).map((f) => Deno.readTextFile(f)))).join("");
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test("after SIGKILL mid-plan the originals are in the audit and the next command warns with the restore command", async () => {
  await using user = await Setup.start();
  await killedMidPlan(user);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }], "the kill left the corrector changed");
  const entries = await auditEntries(user);
  const ahead = entries.find((e) => e.status === "write_ahead");
  assert.ok(ahead, "a write-ahead record");
  assert.deepEqual(ahead.originals, { [H01]: 0.5 });
  assert.equal(entries.at(-1), ahead, "nothing after it: the outcome was never recorded");

  const got = await user.run(["get", H01]);
  assert.equal(got.code, 0, got.stderr);
  assert.match(
    got.stderr,
    new RegExp(
      `warning: plan [0-9a-f]{12} "trim H01 and watch" .* did not finish .*${H01} was 0\\.5.*` +
        `accel-agent plan recover ${ahead.run}`,
    ),
  );
  const listed = JSON.parse((await user.run(["plan", "recover", "--json"])).stdout);
  assert.deepEqual(listed.unfinished.map((m: { run: string }) => m.run), [ahead.run]);
  // audit verify says which plans have no outcome.
  const verify = await user.run(["audit", "verify", "--json"]);
  assert.match(verify.stdout, new RegExp(String(ahead.run)));
});

Deno.test("plan recover saves the restoring plan, which runs only when approved and closes the run", async () => {
  await using user = await Setup.start();
  await killedMidPlan(user);
  const [, run] = /plan recover ([0-9a-f-]{36})/.exec((await user.run(["get", H01])).stderr) ?? [];
  assert.ok(run);
  // No terminal: nothing is written, the plan is saved for the operator's review.
  const asked = await user.run(["plan", "recover", run, "--json"]);
  assert.equal(asked.code, 3, asked.stderr);
  const id = JSON.parse(asked.stdout).plan_id as string;
  assert.match(id, /^recover-/);
  assert.equal(user.writes.length, 1, "nothing written before approval");
  // The operator reviews it and approves it with a token.
  const shown = JSON.parse((await user.run(["plan", "show", id, "--json"])).stdout);
  assert.deepEqual(
    shown.changes.map((
      c: { device: string; from: number; to: number },
    ) => [c.device, c.from, c.to]),
    [[H01, 0.6, 0.5]],
  );
  const ran = await user.run([
    "plan",
    "run",
    id,
    "--approved-hash",
    shown.approval.token,
    "--json",
  ]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
  // The run is closed: recorded, and no more warnings.
  assert.equal((await auditEntries(user)).at(-1)?.decision, "recovered");
  const after = await user.run(["get", H01]);
  assert.doesNotMatch(after.stderr, /did not finish/);
});

Deno.test("a run whose devices already read their originals is closed by plan recover without a write", async () => {
  await using user = await Setup.start();
  await killedMidPlan(user, 0.5);
  const [, run] = /plan recover ([0-9a-f-]{36})/.exec((await user.run(["get", H01])).stderr) ?? [];
  assert.ok(run);
  const done = await user.run(["plan", "recover", run, "--json"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(JSON.parse(done.stdout).status, "already_restored");
  assert.equal(user.writes.length, 1);
  assert.doesNotMatch((await user.run(["get", H01])).stderr, /did not finish/);
});

Deno.test("plan recover --dismiss closes a run without writing, and the audit records who dismissed it", async () => {
  await using user = await Setup.start();
  await killedMidPlan(user);
  const [, run] = /plan recover ([0-9a-f-]{36})/.exec((await user.run(["get", H01])).stderr) ?? [];
  const done = await user.run(["plan", "recover", (run as string).slice(0, 8), "--dismiss"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(user.writes.length, 1);
  const last = (await auditEntries(user)).at(-1);
  assert.equal(last?.decision, "dismissed");
  assert.equal(last?.run, run);
  assert.doesNotMatch((await user.run(["get", H01])).stderr, /did not finish/);
});

Deno.test("a plan running in another process is not reported as unfinished", async () => {
  await using user = await Setup.start();
  const file = await user.plan(writeThenHold(0.6, "trim and hold"));
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    onSpawn: async (launcher) => {
      await waitFor(() => user.writes.length === 1, 60_000, "the plan's write");
      const other = await user.run(["get", H01]);
      assert.doesNotMatch(other.stderr, /did not finish/);
      launcher.kill("SIGTERM");
    },
  });
  assert.equal(ran.code, 143, ran.stderr);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
  assert.doesNotMatch((await user.run(["get", H01])).stderr, /did not finish/);
});

Deno.test("a plan whose originals cannot be recorded before its first write writes nothing and says so", async () => {
  await using user = await Setup.start();
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: H01, value: 0.6, reason: "trim" }],
  });
  const token = await user.token(file);
  // The run journal's directory cannot be made: a file stands where it goes.
  await Deno.writeTextFile(`${user.stateDir}/running`, "in the way");
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(ran.code, 1, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "refused");
  assert.match(
    JSON.stringify(out.errors),
    /the original values could not be recorded before writing anything .*nothing was written/,
  );
  assert.match(
    JSON.stringify(out.errors),
    /the approval token was not spent: it can run this plan until 20/,
  );
  assert.deepEqual(user.writes, []);
  // The token was not spent: with the directory back, it runs the plan once.
  await Deno.remove(`${user.stateDir}/running`);
  const again = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }]);
  const replay = await user.run(["plan", "run", file, "--approved-hash", token]);
  assert.equal(replay.code, 1);
  assert.match(replay.stderr, /the token was already used at /);
});

Deno.test({
  name:
    "a run whose write-ahead marker meets a full disk writes nothing, says its token was not spent, and the token runs the plan once there is room",
  ignore: !(await canMount()),
  fn: async () => {
    await using user = await Setup.start();
    const file = await user.plan({
      description: "trim H01",
      actions: [{ type: "write", device: H01, value: 0.6, reason: "trim" }],
    });
    const token = await user.token(file);
    const running = `${user.stateDir}/running`;
    const unmount = await mountTmpfs(running, "64k");
    try {
      await fill(running);
      const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
      assert.equal(ran.code, 1, ran.stderr);
      const out = JSON.parse(ran.stdout);
      assert.equal(out.status, "refused");
      assert.match(JSON.stringify(out.errors), /No space left on device.*nothing was written/);
      assert.match(JSON.stringify(out.errors), /the approval token was not spent/);
      assert.deepEqual(user.writes, []);
      await Deno.remove(`${running}/filler`);
      const again = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }]);
    } finally {
      await unmount();
    }
  },
});
