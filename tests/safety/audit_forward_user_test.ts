/**
 * The off-console audit as an operator's console runs it: through the
 * launcher with the grants it computes (the collector's host added to the
 * network grant from the site file, and nothing else), on the fake EPICS
 * facility, a fake TCP syslog collector named in the site file.
 */
import assert from "node:assert/strict";
import { readRecordsAfter } from "../../src/safety/forward_cursor.ts";
import { FakeSyslog, until } from "../support/facility/fake_syslog.ts";
import { programPid, UserSetup, writeThenHold } from "../support/user_grants.ts";
import { waitFor } from "../support/run_agent.ts";

async function entries(stateDir: string) {
  return (await readRecordsAfter(`${stateDir}/audit`, { sent: 0, hash: "", attempted: 0 })).entries;
}

/** Every audit entry arrived with its hash; no entry came twice without the resent mark. */
async function assertForwarded(collector: FakeSyslog, stateDir: string) {
  const all = await entries(stateDir);
  assert.ok(all.length > 0);
  for (const { seq, entry } of all) {
    const copies = collector.messages.filter((m) => Number(m.sd.seq) === seq);
    assert.ok(copies.length >= 1, `entry ${seq} (${entry.decision}) never reached the collector`);
    assert.ok(copies.every((c) => c.sd.hash === entry.hash));
    assert.ok(copies.filter((c) => c.sd.resent !== "1").length <= 1, `entry ${seq} twice unmarked`);
    assert.deepEqual(copies[0]?.entry, entry, "the whole entry");
  }
}

async function siteFile(user: UserSetup, collector: FakeSyslog): Promise<Record<string, string>> {
  const path = await user.file(
    "site.toml",
    `[audit_forward]\nsyslog = "${collector.address}"\ntimeout_s = 30\nretry_s = 0.2\n`,
  );
  return { ACCEL_AGENT_SITE_FILE: path };
}

Deno.test("a plan run through the launcher: the site's syslog collector receives every audit record", async () => {
  await using collector = FakeSyslog.start();
  await using user = await UserSetup.start();
  const env = await siteFile(user, collector);
  const grants = await user.run(["permissions", "--json"], { env });
  assert.ok(JSON.parse(grants.stdout).net.includes(collector.address), grants.stdout);
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
  });
  const shown = await user.run(["plan", "show", file, "--json"], { env });
  const token = JSON.parse(shown.stdout).approval.token;
  const ran = await user.run(["plan", "run", file, "--approved-hash", token], { env });
  assert.equal(ran.code, 0, ran.stderr);
  assert.doesNotMatch(ran.stderr, /audit forwarding/, "a working collector is not mentioned");
  const all = await entries(user.stateDir);
  await collector.received(all.length);
  await assertForwarded(collector, user.stateDir);
  assert.ok(all.some((e) => e.entry.status === "completed"), "the outcome is among them");
});

Deno.test("a collector down while a plan runs gets the records it missed when it returns; the plan goes on", async () => {
  await using collector = FakeSyslog.start();
  await using user = await UserSetup.start();
  const env = await siteFile(user, collector);
  const file = await user.plan(writeThenHold());
  const token = await user.token(file);
  collector.stop();
  let guard: ReturnType<typeof setTimeout> | undefined;
  const ran = await user.run(["plan", "run", file, "--approved-hash", token], {
    env,
    onSpawn: async (launcher) => {
      // The plan goes on without it: its write reaches the gateway.
      await waitFor(() => user.writes.length === 1, 60_000, "the plan's write");
      collector.restart();
      // Back: what the plan recorded meanwhile arrives while it still runs.
      const total = (await entries(user.stateDir)).length;
      await until(() => new Set(collector.seqs()).size >= total, `${total} entries forwarded`);
      Deno.kill(await programPid(launcher), "SIGINT");
      guard = setTimeout(() => launcher.kill("SIGKILL"), 60_000);
    },
  });
  clearTimeout(guard);
  assert.equal(ran.code, 130, ran.stderr);
  assert.match(
    ran.stderr,
    /audit forwarding to syslog 127\.0\.0\.1:\d+ failed \(.+\); nothing is held up/,
  );
  assert.match(ran.stderr, /audit forwarding to syslog 127\.0\.0\.1:\d+ works again/);
  // The outcome, recorded after the restore, came through as well.
  const all = await entries(user.stateDir);
  await until(() => new Set(collector.seqs()).size >= all.length, "every entry");
  await assertForwarded(collector, user.stateDir);
  assert.equal(all.at(-1)?.entry.status, "aborted");
});

Deno.test("records a stopped collector missed are sent by the next command that audits, marked when in doubt", async () => {
  await using collector = FakeSyslog.start();
  await using user = await UserSetup.start();
  const env = await siteFile(user, collector);
  collector.stop();
  const file = await user.plan({
    description: "trim H01",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "trim" }],
  });
  const first = await user.run(["plan", "run", file, "--approved-hash", await user.token(file)], {
    env,
  });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /audit forwarding to syslog .* failed/);
  assert.equal(collector.messages.length, 0);
  collector.restart();
  const again = await user.plan({
    description: "trim H01 back",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value: 0.5, reason: "back" }],
  }, "back.json");
  const second = await user.run(
    ["plan", "run", again, "--approved-hash", await user.token(again)],
    {
      env,
    },
  );
  assert.equal(second.code, 0, second.stderr);
  const all = await entries(user.stateDir);
  await until(() => new Set(collector.seqs()).size >= all.length, "every entry");
  await assertForwarded(collector, user.stateDir);
});
