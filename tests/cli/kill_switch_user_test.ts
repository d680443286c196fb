/**
 * The site kill switch turned off while a plan runs, as a user runs the
 * program: through the launcher with the config's grants, on the fake EPICS
 * facility whose gateway records every write it receives. The plan stops
 * before its next write, what it wrote is restored, and the audit records
 * the stop with the switch off.
 */
import assert from "node:assert/strict";
import { runAsUser, type UserSetup, UserSetup as Setup } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";

const H01 = "SR:COR:H01:SETPT";

/** Replaces the site file whole (a rename), as an operator's editor or a deploy would. */
async function setSite(user: UserSetup, text: string): Promise<string> {
  const path = `${user.dir}/site.toml`;
  await Deno.writeTextFile(`${path}.new`, text);
  await Deno.rename(`${path}.new`, path);
  return path;
}

Deno.test("the site switch turned off during a plan's WAIT: the next write never reaches the gateway, the changed device is restored, the audit records the stop", async () => {
  await using user = await Setup.start();
  const site = await setSite(user, "writes_enabled = true\n");
  const env = { ACCEL_AGENT_SITE_FILE: site };
  const file = await user.plan({
    description: "trim H01, watch, trim again",
    actions: [
      { type: "write", device: H01, value: 0.6, reason: "trim" },
      { type: "wait", seconds: 300, reason: "watch the orbit" },
      { type: "write", device: H01, value: 0.7, reason: "trim again" },
    ],
  });
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    env,
    ceilingMs: 120_000,
    onSpawn: async () => {
      await user.writesReached(1);
      await setSite(user, 'writes_enabled = false\nreason = "MD shift"\n');
    },
  });
  assert.equal(ran.code, 1, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "aborted");
  assert.equal(out.aborted_by, "kill_switch");
  assert.match(
    out.errors[0],
    /^the plan stopped while it waited: writes are disabled by the site kill switch \(.*site\.toml: writes_enabled = false: MD shift\)/,
  );
  // On the wire: the trim, then the restore; the second trim never.
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
  assert.deepEqual(
    out.restored.map((r: { device: string; to: number; ok: boolean }) => [r.device, r.to, r.ok]),
    [[H01, 0.5, true]],
  );
  // The audit: the stop, with the switch as it was when the plan stopped.
  const last = (await auditEntries(user.stateDir)).at(-1);
  assert.equal(last?.status, "aborted");
  assert.equal(last?.results.abortedBy, "kill_switch");
  assert.equal(last?.safety.writesEnabled, false);
  assert.match(JSON.stringify(last?.safety.site), /writes_enabled = false: MD shift/);
  // Restored and recorded: the run is closed, nothing is left to recover.
  const left = await user.run(["plan", "recover", "--json"], { env });
  assert.deepEqual(JSON.parse(left.stdout).unfinished, []);
  assert.doesNotMatch(ran.stderr, /^\s+at |Stack backtrace/m);
});

Deno.test("the bound, in writes: a switch turned off mid-scan lets at most the one point already past its check reach the gateway, and every point the wire received is in the audit and the JSON", async () => {
  await using user = await Setup.start();
  const site = await setSite(user, "writes_enabled = true\n");
  const env = { ACCEL_AGENT_SITE_FILE: site };
  const file = await user.plan({
    description: "scan H01",
    actions: [{
      type: "scan",
      writeDevice: H01,
      start: 0.5,
      stop: 1.5,
      steps: 11,
      readDevices: ["SR:BPM:01:X"],
      dwellSeconds: 1,
    }],
  });
  const token = await user.token(file);
  let atFlip = 0;
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    env,
    ceilingMs: 120_000,
    onSpawn: async () => {
      await user.writesReached(3);
      await setSite(user, "writes_enabled = false\n");
      atFlip = user.writes.length;
    },
  });
  assert.equal(ran.code, 1, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.aborted_by, "kill_switch");
  const values = user.writes.map((w) => w.value as number);
  const top = values.indexOf(Math.max(...values));
  const points = values.slice(0, top + 1);
  // Points go up by 0.1; after the flip at most one more, then only the restore back down.
  assert.ok(points.length - atFlip <= 1, `${points.length} points, ${atFlip} at the flip`);
  assert.ok(points.length < 11, "the scan stopped");
  const restore = values.slice(top + 1);
  assert.ok(
    restore.length >= 1 && restore.every((v, i) => v < (i ? restore[i - 1]! : values[top]!)),
  );
  assert.equal(restore.at(-1), 0.5);
  // Every point the gateway received, in the JSON and in the audit.
  const scan = out.actions[0];
  assert.equal(scan.ok, false);
  assert.deepEqual(scan.written, points);
  const last = (await auditEntries(user.stateDir)).at(-1);
  assert.deepEqual(last?.results.actions[0].written, points);
  assert.equal(last?.safety.writesEnabled, false);
});

Deno.test("a site switch off when an approved plan would start: refused before its first write, and the token stays usable", async () => {
  await using user = await Setup.start();
  const site = await setSite(user, "writes_enabled = true\n");
  const env = { ACCEL_AGENT_SITE_FILE: site };
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: H01, value: 0.6, reason: "trim" }],
  });
  const token = await user.token(file);
  await setSite(user, "writes_enabled = false\n");
  const refused = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    env,
  });
  assert.equal(refused.code, 1, refused.stderr);
  assert.deepEqual(user.writes, []);
  await setSite(user, "writes_enabled = true\n");
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], { env });
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }]);
});

Deno.test("the switch of a config the operator's extends, turned off during a plan's WAIT: the next write never reaches the gateway", async () => {
  await using user = await Setup.start();
  // The operator's own file names only its colours; the facility's config below it holds the switch.
  const own = await user.file("own.toml", 'extends = "config.toml"\n[ui]\ncolor = "never"\n');
  const facility = await Deno.readTextFile(user.configPath);
  const file = await user.plan({
    description: "trim H01, watch, trim again",
    actions: [
      { type: "write", device: H01, value: 0.6, reason: "trim" },
      { type: "wait", seconds: 300, reason: "watch the orbit" },
      { type: "write", device: H01, value: 0.7, reason: "trim again" },
    ],
  });
  const shown = await runAsUser(["--config", own, "plan", "show", file, "--json"]);
  const token = JSON.parse(shown.stdout).approval.token;
  const ran = await runAsUser(
    ["--config", own, "plan", "run", file, "--approved-hash", token, "--json"],
    {
      ceilingMs: 120_000,
      onSpawn: async () => {
        await user.writesReached(1);
        const off = facility.replace("[safety]\n", "[safety]\nwrites_enabled = false\n");
        assert.notEqual(off, facility);
        await Deno.writeTextFile(`${user.configPath}.new`, off);
        await Deno.rename(`${user.configPath}.new`, user.configPath);
      },
    },
  );
  assert.equal(ran.code, 1, ran.stderr);
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "aborted");
  assert.equal(out.aborted_by, "kill_switch");
  assert.deepEqual(user.writes, [{ pv: H01, value: 0.6 }, { pv: H01, value: 0.5 }]);
});
