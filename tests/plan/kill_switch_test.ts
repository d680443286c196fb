/**
 * A kill switch turned off while a plan runs: the writer asks the switches
 * before every write and scan point, and each second of a wait; the plan
 * stops before its next write, what it wrote is restored (the one kind of
 * write a switch that is off allows), and the outcome records the switch
 * off. A plan approved while the switch was on does not start once it is off.
 */
import assert from "node:assert/strict";
import { AuditLog } from "../../src/safety/audit.ts";
import { ApprovalTokens } from "../../src/safety/approval_token.ts";
import { type Approver, TokenApprover } from "../../src/safety/approval.ts";
import { planHash } from "../../src/plan_model/plan.ts";
import { forModel } from "../../src/tools/propose_plan.ts";
import { SWITCH_POLL_MS } from "../../src/plan/executor/run.ts";
import { auditEntries } from "../support/audit_entries.ts";
import { ApproveAll, assertExecuted, fixture, switches, valueOf } from "./fixture.ts";

const H = (n: number) => `LINAC:COR:H0${n}:SETPT`;
const never = () => new AbortController().signal;
const write = (device: string, value: number) => ({ type: "write", device, value, reason: "t" });

async function outcomeEntry(audit: AuditLog) {
  const text = await Promise.all((await audit.files()).map((f) => Deno.readTextFile(f)));
  return text.join("").trim().split("\n").map((l) => JSON.parse(l)).at(-1);
}

Deno.test("a switch turned off during a WAIT stops the plan within a second, before its next write; what it wrote is restored and the outcome records the switch off", async () => {
  // The switch goes off 10 s (simulated) into a 60 s wait.
  let offAt = Infinity;
  await using f = await fixture({ safety: switches(() => f.clock.now() < offAt) });
  const [h1, h2] = [(await valueOf(f.sim, H(1))) as number, (await valueOf(f.sim, H(2))) as number];
  let waitStarted = 0;
  f.cs.faults.afterWrite = (n) => {
    if (n === 1) offAt = (waitStarted = f.clock.now()) + 10_000;
  };
  const outcome = await f.service.propose(
    {
      description: "trim, watch, trim again",
      actions: [write(H(1), h1 + 0.1), { type: "wait", seconds: 60 }, write(H(2), h2 + 0.1)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  const e = outcome.execution;
  assert.equal(e.abortedBy, "kill_switch");
  // The second write never went out; the first was put back.
  assert.deepEqual(f.cs.writes.map((w) => w.device), [H(1), H(1)]);
  assert.equal(await valueOf(f.sim, H(1)), h1);
  assert.equal(await valueOf(f.sim, H(2)), h2);
  assert.deepEqual(e.restores.map((r) => [r.device, r.ok]), [[H(1), true]]);
  assert.match(
    e.errors[0] ?? "",
    /^the plan stopped while it waited: writes are disabled by the site kill switch \(site\.toml: writes_enabled = false: beam study\)/,
  );
  // The bound: within one poll of the switch going off, not at the end of the wait.
  const stoppedAfter = Date.parse(e.finishedAt) - waitStarted;
  assert.ok(stoppedAfter <= 10_000 + SWITCH_POLL_MS + 1, `stopped ${stoppedAfter} ms in`);
  assert.deepEqual(e.results.map((r) => [r.where, r.ok]), [
    ["actions[0]", true],
    ["actions[1]", false],
  ]);
  // The audit's outcome says writes were off, and why it stopped.
  const last = await outcomeEntry(f.audit);
  assert.equal(last.status, "aborted");
  assert.equal(last.results.abortedBy, "kill_switch");
  assert.equal(last.safety.writesEnabled, false);
  assert.equal(last.safety.site[0].writesEnabled, false);
  assert.equal(forModel(outcome).status, "aborted");
});

Deno.test("a switch turned off while a scan point is written stops the scan before the next point; the points sent are in the result", async () => {
  let on = true;
  await using f = await fixture({ safety: switches(() => on) });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  f.cs.faults.afterWrite = (n) => {
    if (n === 3) on = false;
  };
  const outcome = await f.service.propose(
    {
      description: "corrector scan",
      actions: [{
        type: "scan",
        writeDevice: H(1),
        start: h1,
        stop: h1 + 1,
        steps: 6,
        readDevices: ["LINAC:BPM:01:X"],
        dwellSeconds: 0,
      }],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  const e = outcome.execution;
  const points = [h1, h1 + 0.2, h1 + 0.4].map((v) => Number(v.toFixed(6)));
  // Three points, then nothing but the restore (ramped back in max_step steps).
  const sent = f.cs.writes.map((w) => Number((w.value as number).toFixed(6)));
  assert.deepEqual(sent.slice(0, 3), points);
  assert.ok(sent.slice(3).every((v) => v < points[2]! && v >= h1 - 1e-9), `${sent}`);
  assert.equal(await valueOf(f.sim, H(1)), h1);
  const scan = e.results[0];
  assert.equal(scan?.ok, false);
  assert.deepEqual(scan?.written?.map((v) => Number((v as number).toFixed(6))), points);
  assert.match(scan?.detail ?? "", /stopped after sending 3 of 6 points of LINAC:COR:H01:SETPT/);
  assert.match(e.errors[0] ?? "", /^the plan stopped before writing LINAC:COR:H01:SETPT = /);
  const json = forModel(outcome);
  assert.ok("actions" in json);
  assert.deepEqual(json.actions[0]?.ok, false);
  assert.equal(json.actions[0]?.written?.length, 3);
});

Deno.test("a scan stopped by the switch whose CSV cannot be written is still recorded as stopped by the switch", async () => {
  let on = true;
  await using f = await fixture({ safety: switches(() => on) });
  // The scans directory cannot be made (a file is in its place), as on a full or broken disk.
  await Deno.writeTextFile(`${f.dir}/work`, "not a directory");
  const h1 = (await valueOf(f.sim, H(1))) as number;
  f.cs.faults.afterWrite = (n) => {
    if (n === 2) on = false;
  };
  const outcome = await f.service.propose(
    {
      description: "corrector scan",
      actions: [{
        type: "scan",
        writeDevice: H(1),
        start: h1,
        stop: h1 + 0.5,
        steps: 6,
        readDevices: ["LINAC:BPM:01:X"],
        dwellSeconds: 0,
      }],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  const e = outcome.execution;
  assert.equal(e.abortedBy, "kill_switch");
  assert.match(e.errors.join("\n"), /^the plan stopped before writing LINAC:COR:H01:SETPT = /m);
  assert.match(e.errors.join("\n"), /^the scan's data of actions\[0\] could not be saved: /m);
  assert.equal(await valueOf(f.sim, H(1)), h1);
  assert.equal((await outcomeEntry(f.audit)).results.abortedBy, "kill_switch");
});

Deno.test("with the switch off, a rollback that writes is not run: the originals are restored instead", async () => {
  let on = true;
  await using f = await fixture({ safety: switches(() => on) });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  f.cs.faults.afterWrite = (n) => {
    if (n === 1) on = false;
  };
  const outcome = await f.service.propose(
    {
      description: "bump, and a rollback that bumps somewhere else",
      actions: [write(H(1), h1 + 0.2)],
      rollback: [write(H(1), h1 + 0.1)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  assert.equal(outcome.execution.abortedBy, "kill_switch");
  assert.match(outcome.execution.errors.join("\n"), /rollback not run: writes are disabled/);
  assert.deepEqual(f.cs.writes.map((w) => w.value), [h1 + 0.2, h1]);
});

Deno.test("a plan approved while the switch was on does not start once it is off: nothing is written and its token is not spent", async () => {
  let on = true;
  await using f = await fixture({ safety: switches(() => on) });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const plan = { description: "trim H01", actions: [write(H(1), h1 + 0.1)] };
  const tokens = new ApprovalTokens(f.dir, { facility: "simulator seed 1", limits: "" });
  const { token, claims } = await tokens.issue(await planHash(plan as never), { ttlMs: 60_000 });
  // The operator approves; while the prompt was up, the facility turned writes off.
  const slow: Approver = {
    explicit: true,
    async decide(p) {
      const d = await new TokenApprover(token, tokens).decide(p);
      on = false;
      return d;
    },
  };
  const refused = await f.service.propose(plan, slow, never());
  assertExecuted(refused, "refused");
  assert.deepEqual(f.cs.writes, []);
  assert.deepEqual(refused.execution.violations.map((v) => v.check), ["writes_enabled"]);
  assert.match(
    refused.execution.errors.join("\n"),
    /the approval token was not spent: it can run this plan until 20/,
  );
  assert.equal(await tokens.usedAt(claims), undefined);
  // The switch back on: the same token runs the plan, once.
  on = true;
  const ran = await f.service.propose(plan, new TokenApprover(token, tokens), never());
  assertExecuted(ran, "completed");
  assert.equal(f.cs.writes.length, 1);
  assert.ok(await tokens.usedAt(claims));
  const entries = await auditEntries(f.dir);
  assert.deepEqual(entries.map((x) => x.status ?? x.decision), [
    "started",
    "refused",
    "started",
    "write_ahead",
    "completed",
  ]);
});

Deno.test("a kill switch that cannot be read counts as off, and the plan stops before its next write", async () => {
  let calls = 0;
  await using f = await fixture({
    safety: () => {
      // Fine for the proposal and the approval, then the switches cannot be read.
      if (++calls > 2) return Promise.reject(new Error("EIO"));
      return switches(() => true)();
    },
  });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const outcome = await f.service.propose(
    { description: "trim H01", actions: [write(H(1), h1 + 0.1)] },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  assert.deepEqual(f.cs.writes, []);
  assert.match(outcome.execution.errors[0] ?? "", /the kill switches cannot be read \(EIO\)/);
});

Deno.test("kill switches that do not answer count as off: the plan stops before its write instead of hanging", async () => {
  let calls = 0;
  await using f = await fixture({
    // Fine for the proposal and the approval; then a read that never ends (an open that blocks).
    safety: () => ++calls > 2 ? new Promise(() => {}) : switches(() => true)(),
  });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const outcome = await f.service.propose(
    { description: "trim H01", actions: [write(H(1), h1 + 0.1)] },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  assert.deepEqual(f.cs.writes, []);
  assert.match(
    outcome.execution.errors[0] ?? "",
    /writes are off: the kill switches did not answer within 5 s/,
  );
});
