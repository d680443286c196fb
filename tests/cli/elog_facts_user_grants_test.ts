/**
 * Every number of a plan's logbook entry is one the executor's results and
 * the audit hold, as an operator's script runs the program (through the
 * launcher, with the config's grants) on the fake EPICS facility: a plan
 * stopped part-way lists only the devices it reached, with the values sent
 * to them, never the plan's later writes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";

const LIMITS = `[limits."SR:COR:H01:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001

[limits."SR:COR:H03:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001

[limits."SR:OPERATOR:MSG"]
values = ["Beam for users", "Machine development"]
`;

const CREDENTIALS = { OLOG_USER: "olog-user", OLOG_PASSWORD: "olog-secret" };

async function setup(): Promise<UserSetup> {
  return await UserSetup.start({
    limits: LIMITS,
    epicsConfig: { username_env: "OLOG_USER", password_env: "OLOG_PASSWORD" },
  });
}

/** The rows of the entry's devices table, by device. */
function rows(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const m = /^\| `([^`]+)` \| (.*) \|$/.exec(line);
    if (m) out.set(m[1] as string, (m[2] as string).split(" | "));
  }
  return out;
}

Deno.test("a plan stopped by a refused write lists only the devices it reached, never the writes after it", async () => {
  await using user = await setup();
  const file = await user.plan({
    description: "Trim H01, then H03, then announce machine development",
    actions: [
      { type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "center the orbit" },
      { type: "write", device: "SR:COR:H03:SETPT", value: 0.1, reason: "close the bump" },
      {
        type: "write",
        device: "SR:OPERATOR:MSG",
        value: "Machine development",
        reason: "tell the users",
      },
    ],
  });
  const token = await user.token(file);
  const ran = await user.run(
    ["plan", "run", file, "--approved-hash", token, "--json", "--elog", "post"],
    { env: CREDENTIALS },
  );
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "failed", ran.stderr);
  assert.equal(out.elog.status, "posted", ran.stderr);
  assert.ok(
    !user.writes.some((w) => w.pv.endsWith("SR:OPERATOR:MSG")),
    "the gateway never got the announcement",
  );
  const [entry] = user.epics.ologService.created;
  const text = String(entry?.description);
  const table = rows(text);
  assert.deepEqual([...table.keys()], ["SR:COR:H01:SETPT", "SR:COR:H03:SETPT"], text);
  // H03 got 0.1 on the wire (the IOC refused it) and was put back: its last write is the original.
  assert.deepEqual(table.get("SR:COR:H03:SETPT")?.[4], "restored to the original", text);
  assert.match(text, /\*\*Outcome:\*\* failed: .*; 2 devices written/);
  // The audit's outcome holds the same: the announcement was never sent.
  const outcome = (await auditEntries(user.stateDir)).find((e) => e.status === "failed");
  const actions = (outcome?.results as { actions: { where: string; ok: boolean }[] }).actions;
  assert.deepEqual(actions.map((a) => [a.where, a.ok]), [
    ["actions[0]", true],
    ["actions[1]", false],
  ]);
});
