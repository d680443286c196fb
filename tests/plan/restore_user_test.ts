/**
 * A restore on a gateway that lies, as a user runs the program (the
 * launcher, the config's grants, `plan run` with its token) on the fake
 * EPICS facility: once the plan has failed, the gateway answers every read
 * of the corrector it wrote with another channel's value. The restore must
 * send nothing the limits or the run did not allow, keep the run open and
 * say why in one line.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

const H01 = "SR:COR:H01:SETPT";
/** Refuses every write in its IOC: the plan's second write fails. */
const H03 = "SR:COR:H03:SETPT";
const BOUNDS = "min = -2\nmax = 2\nmax_step = 0.5\ntolerance = 0.001\nreadback = false\n";

/** The plan of the test below, approved, with the gateway set to lie once H03's write arrives. */
async function lyingRun(user: UserSetup): Promise<string[]> {
  const plan = await user.plan({
    description: "trim",
    actions: [
      { type: "write", device: H01, value: 0.8, reason: "trim" },
      { type: "write", device: H03, value: 0.1, reason: "trim" },
    ],
  });
  const token = await user.token(plan);
  const pvws = user.epics.pvws;
  pvws.onWrite = (pv) => {
    if (pv === H03) pvws.lie(H01, -1000);
  };
  return ["plan", "run", plan, "--approved-hash", token];
}

Deno.test("a gateway answering with another channel's value cannot walk a restore past the limits: nothing outside them reaches the wire and the run stays open", async () => {
  await using user = await UserSetup.start({
    limits: `[limits."${H01}"]\n${BOUNDS}\n[limits."${H03}"]\n${BOUNDS}`,
  });
  const run = await user.run([...(await lyingRun(user)), "--json"]);
  const out = JSON.parse(run.stdout);
  assert.equal(out.status, "failed", run.stdout);
  for (const w of user.writes) {
    assert.ok(Math.abs(w.value as number) <= 2, `${w.pv} = ${w.value} reached the wire`);
  }
  // H03's write was sent and never confirmed, so its restore writes its original (0).
  assert.deepEqual(user.writes, [
    { pv: H01, value: 0.8 },
    { pv: H03, value: 0.1 },
    { pv: H03, value: 0 },
  ]);
  const restore = out.restored.find((r: { device: string }) => r.device === H01);
  assert.equal(restore.ok, false);
  assert.match(restore.error, /refused to restore SR:COR:H01:SETPT: it reads -1000/);
  assert.match(out.errors.join("\n"), /the run stays open: accel-agent plan recover /);
  assert.doesNotMatch(run.stderr, /^\s+at /m);
});

Deno.test("a restore that failed is printed as not restored, never as restored", async () => {
  await using user = await UserSetup.start({
    limits: `[limits."${H01}"]\n${BOUNDS}\n[limits."${H03}"]\n${BOUNDS}`,
  });
  const run = await user.run(await lyingRun(user));
  assert.equal(run.code, 1, run.stderr);
  const lines = run.stdout.split("\n");
  assert.ok(
    lines.some((l) => /^ {2}✗ SR:COR:H01:SETPT not restored to 0\.5: refused to restore/.test(l)),
    run.stdout,
  );
  assert.deepEqual(lines.filter((l) => /restored SR:COR:H01/.test(l)), [], run.stdout);
});

Deno.test("a gateway that lies about an enum's state just before its write cannot have the restore set a state the limits do not allow", async () => {
  await using user = await UserSetup.start({
    limits: `[limits."${H01}"]\n${BOUNDS}\n[limits."${H03}"]\n${BOUNDS}\n` +
      `[limits."SR:MODE"]\nvalues = ["On", "Standby"]\nreadback = false\n`,
  });
  const plan = await user.plan({
    description: "standby",
    actions: [
      { type: "write", device: H01, value: 0.8, reason: "trim" },
      { type: "write", device: "SR:MODE", value: "Standby", reason: "standby" },
      { type: "write", device: H03, value: 0.1, reason: "trim" },
    ],
  });
  const token = await user.token(plan);
  const pvws = user.epics.pvws;
  // SR:MODE is On (1); once H01 is written the gateway says Off (0), until SR:MODE is written.
  pvws.onWrite = (pv) => {
    if (pv === H01) pvws.lie("SR:MODE", 0);
    if (pv === "SR:MODE") pvws.lie("SR:MODE", undefined);
  };
  const run = await user.run(["plan", "run", plan, "--approved-hash", token, "--json"]);
  const out = JSON.parse(run.stdout);
  assert.equal(out.status, "failed", run.stdout);
  const modes = user.writes.filter((w) => w.pv === "SR:MODE").map((w) => w.value);
  assert.deepEqual(modes, [2], "only Standby, never Off (0), reached SR:MODE");
  const restore = out.restored.find((r: { device: string }) => r.device === "SR:MODE");
  assert.equal(restore.ok, false);
  assert.match(
    restore.error,
    /refused to restore SR:MODE to Off: its limits do not list that value, and it read On before/,
  );
});

Deno.test("a numeric device the gateway reads as text before a write is not written: its step from the live value cannot be checked", async () => {
  await using user = await UserSetup.start({ limits: `[limits."${H01}"]\n${BOUNDS}` });
  const plan = await user.plan({
    description: "trim in two steps",
    actions: [
      { type: "write", device: H01, value: 0.6, reason: "trim" },
      { type: "wait", seconds: 3, reason: "watch" },
      { type: "write", device: H01, value: 1.0, reason: "trim more" },
    ],
  });
  const token = await user.token(plan);
  const pvws = user.epics.pvws;
  // After the first write, someone moves H01 to 1.9 and the gateway reports it as text.
  pvws.onWrite = () => {
    pvws.onWrite = undefined;
    setTimeout(() => {
      pvws.garble = (u) =>
        u.pv === H01 && typeof u.value === "number"
          ? JSON.stringify({ ...u, value: String(u.value) })
          : undefined;
      pvws.set(H01, 1.9);
    }, 500);
  };
  const run = await user.run(["plan", "run", plan, "--approved-hash", token, "--json"]);
  const out = JSON.parse(run.stdout);
  assert.equal(out.status, "failed", run.stdout);
  assert.deepEqual(user.writes.map((w) => w.value).slice(0, 1), [0.6]);
  assert.ok(!user.writes.some((w) => w.value === 1.0), JSON.stringify(user.writes));
  assert.match(
    out.errors.join("\n"),
    /refused to write SR:COR:H01:SETPT = 1: it reads "1\.9", not a number/,
  );
});
