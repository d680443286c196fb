/**
 * Recovery against markers and runs arranged to mislead, as a user runs the
 * program (the launcher, the config's grants, real SIGKILLs) on the fake
 * EPICS facility: a marker whose content names another run than its file,
 * and two unfinished runs that changed the same device, recovered in the
 * order they are listed.
 */
import assert from "node:assert/strict";
import type { RunResult } from "../support/run_agent.ts";
import { programPid, UserSetup } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";

const H01 = "SR:COR:H01:SETPT";

/** Runs `actions` with a token and SIGKILLs the program once the gateway has seen `writes` writes. */
async function killedAfter(user: UserSetup, actions: unknown[], writes: number): Promise<void> {
  const file = await user.plan({ description: "trim H01 and watch", actions });
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
    onSpawn: async (launcher) => {
      await user.writesReached(writes);
      Deno.kill(await programPid(launcher), "SIGKILL");
    },
  });
  assert.notEqual(ran.code, 0);
}

const trimAndHold = (value: number) => [
  { type: "write", device: H01, value, reason: "trim" },
  { type: "wait", seconds: 600, reason: "watch the orbit" },
];

interface Listed {
  run: string;
  originals: Record<string, unknown> | null;
  problem?: string;
}

async function unfinished(user: UserSetup): Promise<Listed[]> {
  const listed = await user.run(["plan", "recover", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  return JSON.parse(listed.stdout).unfinished;
}

/** `plan recover RUN`, then the saved plan run with a token, as a script does. */
async function recoverWithToken(user: UserSetup, run: string): Promise<RunResult> {
  const asked = await user.run(["plan", "recover", run, "--json"]);
  assert.equal(asked.code, 3, asked.stdout + asked.stderr);
  const id = JSON.parse(asked.stdout).plan_id as string;
  const token = await user.token(id);
  return await user.run(["plan", "run", id, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
  });
}

function noTrace(r: RunResult): void {
  assert.doesNotMatch(r.stderr + r.stdout, /^\s+at |Stack backtrace|internal error/m);
}

Deno.test("a marker whose content names another run than its file is damaged: the run is listed under its file's id, kept open, and dismissed only by that id", async () => {
  await using user = await UserSetup.start();
  await killedAfter(user, trimAndHold(0.6), 1);
  const [{ run }] = (await unfinished(user)) as [Listed];
  const path = `${user.stateDir}/running/${run}.json`;
  const other = crypto.randomUUID();
  const marker = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(path, JSON.stringify({ ...marker, run: other }));
  const listed = await unfinished(user);
  assert.deepEqual(listed.map((l) => l.run), [run]);
  assert.match(listed[0]?.problem ?? "", new RegExp(`names run "${other}", not ${run}`));
  assert.deepEqual(listed[0]?.originals, { [H01]: 0.5 }, "the audit's originals");
  // Not under the id its content claims: that run does not exist.
  const claimed = await user.run(["plan", "recover", other, "--dismiss"]);
  assert.equal(claimed.code, 2, claimed.stderr);
  noTrace(claimed);
  const r = await user.run(["plan", "recover", run]);
  assert.equal(r.code, 1, r.stderr);
  noTrace(r);
  assert.match(r.stderr, new RegExp(`run ${run} stays open: .*names run .${other}`));
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }], "nothing written");
  const dismissed = await user.run(["plan", "recover", run, "--dismiss"]);
  assert.equal(dismissed.code, 0, dismissed.stderr);
  assert.deepEqual(await unfinished(user), []);
  assert.equal((await auditEntries(user.stateDir)).at(-1)?.run, run);
});

Deno.test("of two unfinished runs that changed the same device, the older is recovered only after the newer: recovered in the order listed, the first fault would come back", async () => {
  await using user = await UserSetup.start();
  await killedAfter(user, trimAndHold(0.6), 1);
  await killedAfter(user, trimAndHold(0.9), 2);
  const [older, newer] = (await unfinished(user)) as [Listed, Listed];
  assert.deepEqual(older.originals, { [H01]: 0.5 });
  assert.deepEqual(newer.originals, { [H01]: 0.6 });
  const first = await user.run(["plan", "recover", older.run]);
  assert.equal(first.code, 1, first.stderr);
  noTrace(first);
  assert.match(
    first.stderr.trim(),
    new RegExp(
      `^accel-agent: run ${older.run} stays open: run ${newer.run}, which started after it, ` +
        `changed SR:COR:H01:SETPT too; recover or dismiss that run first: ` +
        `accel-agent plan recover ${newer.run}; nothing was written$`,
    ),
  );
  assert.equal(user.writes.length, 2, "nothing written");
  assert.equal((await recoverWithToken(user, newer.run)).code, 0);
  assert.equal((await recoverWithToken(user, older.run)).code, 0);
  assert.deepEqual(user.writes.map((w) => w.value), [0.6, 0.9, 0.6, 0.5]);
  assert.equal(user.epics.pvws.pvs.get(H01)?.value, 0.5);
  assert.deepEqual(await unfinished(user), []);
});

Deno.test("a running directory that is not one is said in one line by plan recover, never with a stack trace", async () => {
  await using user = await UserSetup.start();
  await Deno.mkdir(user.stateDir, { recursive: true });
  await Deno.writeTextFile(`${user.stateDir}/running`, "not a directory");
  for (const args of [[], ["--json"], ["12345678"], ["12345678", "--dismiss"]]) {
    const r = await user.run(["plan", "recover", ...args]);
    assert.equal(r.code, 1, r.stderr);
    noTrace(r);
    assert.match(
      r.stderr.trim(),
      /^accel-agent: cannot look for unfinished plans in .*\/running \(Not a directory[^\n]*\)$/,
    );
  }
});

Deno.test("a marker left behind by a run whose outcome the audit records (killed between the two) is not offered for recovery: following it would undo a completed plan", async () => {
  await using user = await UserSetup.start();
  const file = await user.plan({
    description: "trim H01 and watch",
    actions: [
      { type: "write", device: H01, value: 0.6, reason: "trim" },
      { type: "wait", seconds: 3, reason: "watch" },
    ],
  });
  const token = await user.token(file);
  let kept: [string, string] | undefined;
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
    onSpawn: async () => {
      await user.writesReached(1);
      // The marker as it is while the plan runs: what a process killed after recording the
      // outcome, before removing its marker, leaves.
      for (const e of Deno.readDirSync(`${user.stateDir}/running`)) {
        const path = `${user.stateDir}/running/${e.name}`;
        if (e.name.endsWith(".json")) kept = [path, await Deno.readTextFile(path)];
      }
    },
  });
  assert.equal(JSON.parse(ran.stdout).status, "completed", ran.stdout);
  assert.ok(kept, "the marker was seen");
  await Deno.writeTextFile(kept[0], kept[1]);
  const [listed] = (await unfinished(user)) as [Listed];
  assert.match(listed.problem ?? "", /the audit records its outcome \(completed/);
  const warned = await user.run(["get", H01]);
  assert.doesNotMatch(warned.stderr, /did not finish/);
  const r = await user.run(["plan", "recover", listed.run]);
  assert.equal(r.code, 1, r.stderr);
  noTrace(r);
  assert.match(
    r.stderr,
    /stays open: .*the audit records its outcome \(completed.*nothing was written/,
  );
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }], "the completed trim stays");
  assert.equal((await user.run(["plan", "recover", listed.run, "--dismiss"])).code, 0);
  assert.deepEqual(await unfinished(user), []);
});
