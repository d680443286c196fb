/**
 * Recovery that only claims what it verified, as a user runs the program:
 * through the launcher with the config's grants, plans killed with real
 * signals at each point of their run, on the fake EPICS facility whose
 * gateway records every write. In every case `plan recover` either restores
 * and verifies against the gateway's values, or keeps the run open and says
 * why in one line.
 */
import assert from "node:assert/strict";
import { waitFor } from "../support/run_agent.ts";
import type { RunResult } from "../support/run_agent.ts";
import { programPid, type UserSetup, UserSetup as Setup } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";
import type { FakeEpicsOptions } from "../support/facility/fake_epics.ts";

const H01 = "SR:COR:H01:SETPT";
const RDBK = "SR:COR:H01:RDBK";

/** The fake facility with H01's readback PV, following it `lagMs` behind, off by `offset`. */
function withReadback(lagMs: number, offset = 0): FakeEpicsOptions {
  return {
    edit: (d) => {
      d.pvs[RDBK] = { value: 0.5, units: "A", readonly: true, follows: H01, lagMs, offset };
    },
  };
}

/** One line on stderr and no stack trace. */
function oneLine(r: RunResult, re: RegExp): void {
  assert.doesNotMatch(r.stderr + r.stdout, /^\s+at |Stack backtrace|internal error/m);
  const lines = r.stderr.split("\n").filter((l) => l && !/warning: /.test(l));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0] as string, re);
}

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
  assert.equal(ran.stdout, "", "a killed program prints nothing");
}

const trimAndHold = (value = 0.6) => [
  { type: "write", device: H01, value, reason: "trim" },
  { type: "wait", seconds: 600, reason: "watch the orbit" },
];

/** The one unfinished run `plan recover --json` lists. */
async function theRun(user: UserSetup) {
  const listed = await user.run(["plan", "recover", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const runs = JSON.parse(listed.stdout).unfinished;
  assert.equal(runs.length, 1, listed.stdout);
  return runs[0] as { run: string; originals: Record<string, unknown> | null; problem?: string };
}

/** `plan recover RUN` without a terminal, then the saved plan run with a token, as a script does. */
async function recoverWithToken(user: UserSetup, run: string): Promise<RunResult> {
  const asked = await user.run(["plan", "recover", run, "--json"]);
  assert.equal(asked.code, 3, asked.stdout + asked.stderr);
  const id = JSON.parse(asked.stdout).plan_id as string;
  assert.match(id, /^recover-/);
  const token = await user.token(id);
  return await user.run(["plan", "run", id, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
  });
}

async function markers(user: UserSetup): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(`${user.stateDir}/running`)) names.push(e.name);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return names.sort();
}

async function auditText(user: UserSetup): Promise<string> {
  let text = "";
  for await (const e of Deno.readDir(`${user.stateDir}/audit`)) {
    if (e.name.endsWith(".jsonl")) {
      text += await Deno.readTextFile(`${user.stateDir}/audit/${e.name}`);
    }
  }
  return text;
}

Deno.test("killed before its write-ahead record: nothing written, no run left open, and its token still runs the plan", async () => {
  // A slow gateway and no monitors kept: the executor's second preflight takes seconds.
  await using user = await Setup.start({
    epicsConfig: { read_timeout_ms: 30_000, monitor_linger_ms: 0 },
  });
  const file = await user.plan({ description: "trim H01 and watch", actions: trimAndHold() });
  const token = await user.token(file);
  user.epics.pvws.latencyMs = 2000;
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    ceilingMs: 180_000,
    onSpawn: async (launcher) => {
      // The approval is recorded ("started"); the program now preflights against the gateway.
      for (;;) {
        if ((await auditText(user).catch(() => "")).includes('"status":"started"')) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      // Holding the audit's lock, the write-ahead record cannot be appended behind our back.
      using lock = await Deno.open(`${user.stateDir}/audit/.lock`, { write: true, create: true });
      await lock.lock(true);
      assert.doesNotMatch(await auditText(user), /"write_ahead"/, "killed before its write-ahead");
      Deno.kill(await programPid(launcher), "SIGKILL");
      await launcher.status;
    },
  });
  assert.notEqual(ran.code, 0);
  assert.deepEqual(user.writes, []);
  assert.doesNotMatch(await auditText(user), /"write_ahead"/);
  user.epics.pvws.latencyMs = 0;
  assert.deepEqual(await theRunsNone(user), []);
  // The token was never spent: it runs the plan, once.
  const again = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
    onSpawn: async (launcher) => {
      await user.writesReached(1);
      launcher.kill("SIGTERM");
    },
  });
  assert.equal(again.code, 143, again.stderr);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
});

async function theRunsNone(user: UserSetup): Promise<unknown[]> {
  const listed = await user.run(["plan", "recover", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  return JSON.parse(listed.stdout).unfinished;
}

Deno.test("killed between its write and the readback: plan recover restores the device and closes the run once the gateway reads it back", async () => {
  await using user = await Setup.start({ epics: withReadback(3000) });
  await killedAfter(user, trimAndHold(), 1);
  const run = await theRun(user);
  assert.deepEqual(run.originals, { [H01]: 0.5 });
  const warned = await user.run(["get", H01]);
  assert.match(
    warned.stderr,
    new RegExp(`did not finish .*${H01} was 0\\.5.*plan recover ${run.run}`),
  );
  const ran = await recoverWithToken(user, run.run);
  assert.equal(ran.code, 0, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.deepEqual(out.recovery, { run: run.run, closed: true });
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
  const last = (await auditEntries(user.stateDir)).at(-1);
  assert.equal(last?.decision, "recovered");
  assert.equal(last?.run, run.run);
  assert.deepEqual(await markers(user), []);
  assert.doesNotMatch((await user.run(["get", H01])).stderr, /did not finish/);
});

Deno.test("killed during its restore: the run stays open, and plan recover verifies the device against the gateway before closing it", async () => {
  await using user = await Setup.start({ epics: withReadback(3000) });
  const file = await user.plan({ description: "trim H01 and watch", actions: trimAndHold() });
  const token = await user.token(file);
  await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
    onSpawn: async (launcher) => {
      await user.writesReached(1);
      launcher.kill("SIGTERM");
      // The restore is on the wire; its readback is 3 s behind: kill it now.
      await user.writesReached(2);
      Deno.kill(await programPid(launcher), "SIGKILL");
    },
  });
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
  const run = await theRun(user);
  // The gateway's readback comes to the original; only then is the run closed, with no write.
  await waitFor(() => user.epics.pvws.pvs.get(RDBK)?.value === 0.5, 60_000, "the readback");
  const done = await user.run(["plan", "recover", run.run, "--json"]);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(JSON.parse(done.stdout).status, "already_restored");
  assert.equal(user.writes.length, 2);
  assert.equal((await auditEntries(user.stateDir)).at(-1)?.decision, "recovered");
  assert.deepEqual(await markers(user), []);
});

Deno.test("a recovery killed midway keeps the first run's marker and originals; recovering again brings the device back to them", async () => {
  await using user = await Setup.start({ epics: withReadback(1500) });
  await killedAfter(user, [
    { type: "write", device: H01, value: 1.0, reason: "trim" },
    { type: "read", devices: [H01] },
    { type: "write", device: H01, value: 1.5, reason: "trim more" },
    { type: "wait", seconds: 600, reason: "watch" },
  ], 2);
  const first = await theRun(user);
  // The recovery ramps 1.5 → 1.0 → 0.5 (max_step 0.5); it is killed after its first step.
  const asked = await user.run(["plan", "recover", first.run, "--json"]);
  assert.equal(asked.code, 3, asked.stderr);
  const id = JSON.parse(asked.stdout).plan_id;
  const token = await user.token(id);
  await user.run(["plan", "run", id, "--approved-hash", token, "--json"], {
    ceilingMs: 120_000,
    onSpawn: async (launcher) => {
      await user.writesReached(3);
      Deno.kill(await programPid(launcher), "SIGKILL");
    },
  });
  assert.deepEqual(user.writes.map((w) => w.value), [1.0, 1.5, 1.0]);
  // One run is open, the first, with its own originals: never the faulted values.
  assert.deepEqual(await markers(user), [`${first.run}.json`, `${first.run}.recovery`]);
  const still = await theRun(user);
  assert.equal(still.run, first.run);
  assert.deepEqual(still.originals, { [H01]: 0.5 });
  const verify = JSON.parse((await user.run(["audit", "verify", "--json"])).stdout);
  assert.deepEqual(verify.unfinished.map((u: { run: string }) => u.run), [first.run]);
  // Recovering again: from where the device is now, back to the first run's original.
  const ran = await recoverWithToken(user, first.run);
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(JSON.parse(ran.stdout).recovery, { run: first.run, closed: true });
  assert.deepEqual(user.writes.map((w) => w.value), [1.0, 1.5, 1.0, 0.5]);
  assert.equal(user.epics.pvws.pvs.get(H01)?.value, 0.5);
  assert.deepEqual(await markers(user), []);
});

Deno.test("a marker that disagrees with the audit, or is cut or damaged, is refused in one line; the run stays open and nothing is written", async () => {
  await using user = await Setup.start();
  await killedAfter(user, trimAndHold(), 1);
  const { run } = await theRun(user);
  const path = `${user.stateDir}/running/${run}.json`;
  const good = await Deno.readTextFile(path);
  const marker = JSON.parse(good);
  const cases: [string, RegExp][] = [
    [
      JSON.stringify({ ...marker, originals: { [H01]: 0.9 } }),
      /its marker disagrees with the audit's write-ahead record \(SR:COR:H01:SETPT was 0\.9 in the marker, 0\.5 in the audit\)/,
    ],
    [
      JSON.stringify({ ...marker, originals: { [H01]: 0.5, "SR:COR:H03:SETPT": 0 } }),
      /the marker names SR:COR:H03:SETPT, which the plan did not record/,
    ],
    [good.slice(0, Math.floor(good.length / 2)), /its marker .* is damaged/],
    ["", /its marker .* is damaged/],
  ];
  for (const [text, why] of cases) {
    await Deno.writeTextFile(path, text);
    const r = await user.run(["plan", "recover", run]);
    assert.equal(r.code, 1, r.stderr);
    oneLine(r, new RegExp(`^accel-agent: run ${run} stays open: .*nothing was written`));
    assert.match(r.stderr, why);
    assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }], "nothing written");
    assert.ok(await Deno.stat(path), "the marker stays");
    // Every start says so, with what the audit holds.
    const warned = await user.run(["get", H01]);
    assert.match(
      warned.stderr,
      /cannot be recovered: .*the audit records SR:COR:H01:SETPT was 0\.5/,
    );
  }
  // The operator checks by hand and dismisses it: recorded with the audit's originals.
  const dismissed = await user.run(["plan", "recover", run, "--dismiss"]);
  assert.equal(dismissed.code, 0, dismissed.stderr);
  const last = (await auditEntries(user.stateDir)).at(-1);
  assert.equal(last?.decision, "dismissed");
  assert.deepEqual(last?.originals, { [H01]: 0.5 });
  assert.deepEqual(await markers(user), []);
});

Deno.test("a marker found as a FIFO when its saved recovery runs: one line, nothing written, never a hang", async () => {
  await using user = await Setup.start();
  await killedAfter(user, trimAndHold(), 1);
  const { run } = await theRun(user);
  const asked = await user.run(["plan", "recover", run, "--json"]);
  assert.equal(asked.code, 3, asked.stdout + asked.stderr);
  const id = JSON.parse(asked.stdout).plan_id as string;
  const token = await user.token(id);
  // Between the steps of a script, the marker is replaced by a FIFO.
  const path = `${user.stateDir}/running/${run}.json`;
  await Deno.rename(path, `${path}.kept`);
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
  const r = await user.run(["plan", "run", id, "--approved-hash", token, "--json"], {
    ceilingMs: 60_000,
  });
  assert.notEqual(r.code, 137, `it waited on the FIFO: ${r.stderr}`);
  assert.equal(r.code, 1, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.match(
    out.errors.join("\n"),
    new RegExp(`cannot recover run ${run}: \\S+${run}\\.json: is a FIFO \\(named pipe\\)`),
  );
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }], "nothing written");
});

Deno.test("run ids are checked before anything is recorded: a bad name is one line, and a marker whose name is not a run id is said, not dismissed", async () => {
  await using user = await Setup.start();
  await Deno.mkdir(`${user.stateDir}/running`, { recursive: true });
  await Deno.writeTextFile(`${user.stateDir}/running/BADNAME.json`, "{}");
  for (const args of [["BADNAME", "--dismiss"], ["BADNAME"], ["../../x", "--dismiss"]]) {
    const r = await user.run(["plan", "recover", ...args]);
    assert.equal(r.code, 2, r.stderr);
    oneLine(
      r,
      /^accel-agent: not a run id: .* accel-agent plan recover lists the unfinished runs$/,
    );
  }
  await assert.rejects(Deno.stat(`${user.stateDir}/audit`), Deno.errors.NotFound);
  const listed = await user.run(["plan", "recover", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    JSON.parse(listed.stdout).unfinished[0].problem,
    /its name is not a run id; remove it by hand/,
  );
  const warned = await user.run(["get", H01]);
  assert.equal(warned.code, 0, warned.stderr);
  assert.match(
    warned.stderr,
    /unfinished run BADNAME cannot be recovered: .*BADNAME\.json: its name is not a run id/,
  );
});

Deno.test("with the gateway down, plan recover cannot read the devices: the run stays open, in one line", async () => {
  await using user = await Setup.start();
  await killedAfter(user, trimAndHold(), 1);
  const { run } = await theRun(user);
  await user.epics.pvws.close();
  const r = await user.run(["plan", "recover", run, "--json"], { ceilingMs: 120_000 });
  assert.equal(r.code, 1, r.stderr);
  oneLine(
    r,
    new RegExp(`^accel-agent: run ${run} stays open: SR:COR:H01:SETPT: it cannot be read`),
  );
  assert.equal(JSON.parse(r.stdout).status, "still_open");
  assert.deepEqual(await markers(user), [`${run}.json`]);
  assert.doesNotMatch(await auditText(user), /"dismissed"|"recovered"/);
});

Deno.test("a failed automatic restore keeps the run open and reported at the next start, and plan recover does not close it while the readback is off", async () => {
  // The readback carries a calibration offset: no write to H01 is ever confirmed.
  await using user = await Setup.start({
    epics: withReadback(50, 0.02),
    safety: "readback_timeout_s = 1",
  });
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: H01, value: 0.6, reason: "trim" }],
  });
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"]);
  assert.equal(ran.code, 1, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "failed");
  assert.equal(out.restored[0].ok, false);
  assert.match(
    out.errors.join("\n"),
    /not every device the plan wrote is back at its original .*the run stays open/,
  );
  const outcome = (await auditEntries(user.stateDir)).at(-1);
  assert.match(
    outcome?.errors.join("\n"),
    /not every device the plan wrote is back at its original/,
  );
  const warned = await user.run(["get", H01]);
  assert.match(
    warned.stderr,
    /ended failed without restoring every device it wrote; devices it wrote: SR:COR:H01:SETPT was 0\.5/,
  );
  const { run } = await theRun(user);
  const r = await user.run(["plan", "recover", run]);
  assert.equal(r.code, 1, r.stderr);
  oneLine(
    r,
    /stays open: SR:COR:H01:SETPT: its readback SR:COR:H01:RDBK reads 0\.52, not its original 0\.5 ±0\.001; nothing was written\. Try again when its devices can be read, or check them by hand, then: accel-agent plan recover \S+ --dismiss$/,
  );
});
