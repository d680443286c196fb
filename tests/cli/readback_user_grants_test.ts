/**
 * Run as an operator runs it (through the launcher, with a user's grants)
 * on the fake EPICS facility: the plan shown before approval and the result
 * name the readback device of each write, and a readback that is off fails
 * the plan and writes the setpoint back, as seen on the gateway.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import type { FakePv } from "../support/facility/fake_pvws.ts";

const SP = "SR:COR:H01:SETPT";
const RB = "SR:COR:H01:RDBK";

async function user(offset: number) {
  return await UserSetup.start({
    safety: "readback_timeout_s = 2",
    epics: {
      edit: (d) => {
        d.pvs[RB] = {
          value: 0.5,
          units: "A",
          readonly: true,
          follows: SP,
          lagMs: 200,
          offset,
        } satisfies FakePv;
      },
    },
  });
}

const TRIM = {
  description: "trim H01",
  actions: [{ type: "write", device: SP, value: 0.6, reason: "trim" }],
};

Deno.test("plan show names the readback device; plan run --json says the write was confirmed by it", async () => {
  await using u = await user(0);
  const file = await u.plan(TRIM);
  const shown = await u.run(["plan", "show", file]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /│ trim +│\n.*│ confirmed by SR:COR:H01:RDBK +│/);
  const json = await u.run(["plan", "show", file, "--json"]);
  const shownJson = JSON.parse(json.stdout);
  assert.equal(shownJson.changes[0].readback.device, RB);
  const ran = await u.run([
    "plan",
    "run",
    file,
    "--approved-hash",
    shownJson.approval.token,
    "--json",
  ]);
  assert.equal(ran.code, 0, ran.stderr);
  const result = JSON.parse(ran.stdout);
  assert.deepEqual(result.actions[0].confirmation, {
    status: "confirmed",
    readback_device: RB,
    readback: 0.6,
  });
  assert.deepEqual(u.writes, [{ pv: SP, value: 0.6 }]);
});

Deno.test("a readback that stays off by more than the tolerance fails the plan and puts the setpoint back", async () => {
  await using u = await user(0.05);
  const file = await u.plan(TRIM);
  const ran = await u.run(["plan", "run", file, "--approved-hash", await u.token(file), "--json"]);
  assert.equal(ran.code, 1, ran.stderr);
  const result = JSON.parse(ran.stdout);
  assert.equal(result.status, "failed");
  assert.match(
    result.errors[0],
    /^readback SR:COR:H01:RDBK of SR:COR:H01:SETPT reads 0\.65, not 0\.6 within ±0\.001 after 2 s: the write is not confirmed$/,
  );
  // The write, then the restore of the original; its readback (0.55) is still off, so that is reported too.
  assert.deepEqual(u.writes, [{ pv: SP, value: 0.6 }, { pv: SP, value: 0.5 }]);
  assert.equal(result.restored[0].device, SP);
  assert.equal(result.restored[0].ok, false);
});
