import assert from "node:assert/strict";
import { AuditLog } from "../../src/safety/audit.ts";
import { verifyAudit } from "../../src/safety/audit_verify.ts";
import { ApproveAll, assertExecuted, fixture, valueOf } from "./fixture.ts";

const H = (n: number) => `LINAC:COR:H0${n}:SETPT`;
const BPMS = ["LINAC:BPM:05:X", "LINAC:BPM:06:X"];
const never = () => new AbortController().signal;

async function originals(
  cs: { read(n: string[]): Promise<{ value: unknown }[]> },
  devices: string[],
) {
  return (await cs.read(devices)).map((r) => r.value as number);
}

async function auditIntact(audit: AuditLog) {
  const result = await verifyAudit(await audit.files(), true);
  assert.equal(result.ok, true, JSON.stringify(result));
  return result;
}

function fiveWrites(start: number[]) {
  return {
    description: "five corrector bumps",
    actions: start.map((v, i) => ({
      type: "write",
      device: H(i + 1),
      value: v + 0.1,
      reason: "bump",
    })),
  };
}

Deno.test("a failure on write 3 of 5 restores the two devices written, newest first, with readbacks", async () => {
  await using f = await fixture({ faults: { failOnWrite: 3 } });
  const devices = [1, 2, 3, 4, 5].map(H);
  const before = await originals(f.sim, devices);
  const outcome = await f.service.propose(fiveWrites(before), new ApproveAll(), never());
  assertExecuted(outcome, "failed");
  const e = outcome.execution;
  assert.match(
    e.errors[0] ?? "",
    /gateway refused the write to LINAC:COR:H03:SETPT \(injected fault on write 3\)/,
  );
  // H03 was read before its write (original captured), so it is restored too.
  // Each restore is confirmed by the corrector's readback device, within the 0.001 tolerance.
  const R = (n: number) => `LINAC:COR:H0${n}:RDBK`;
  assert.deepEqual(e.restores.map((r) => [r.device, r.to, r.readbackDevice, r.ok]), [
    [H(3), before[2], R(3), true],
    [H(2), before[1], R(2), true],
    [H(1), before[0], R(1), true],
  ]);
  for (const [i, r] of e.restores.entries()) {
    assert.ok(
      Math.abs((r.readback as number) - (before[2 - i] as number)) <= 0.001,
      String(r.readback),
    );
  }
  assert.deepEqual(await originals(f.sim, devices), before);
  // The approval is recorded before the first write, the originals right before it, the outcome after.
  assert.equal((await auditIntact(f.audit)).entries, 3);
  const [started, ahead, line] = (await Deno.readTextFile((await f.audit.files())[0] as string))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(started.status, "started");
  assert.equal(ahead.status, "write_ahead");
  assert.deepEqual(Object.keys(ahead.originals), devices);
  assert.equal(line.status, "failed");
  assert.equal(line.restores.length, 3);
  assert.equal(line.decision, "approved");
});

Deno.test("a readback that never matches fails the write and restores the original", async () => {
  await using f = await fixture({ faults: { stuck: H(2) } });
  const [h1, h2] = await originals(f.sim, [H(1), H(2)]);
  const outcome = await f.service.propose(
    {
      description: "two bumps",
      actions: [
        { type: "write", device: H(1), value: h1! + 0.1, reason: "a" },
        { type: "write", device: H(2), value: h2! + 0.1, reason: "b" },
      ],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  assert.match(
    outcome.execution.errors[0] ?? "",
    /readback LINAC:COR:H02:RDBK of LINAC:COR:H02:SETPT reads .*, not .* within ±0\.001 after 10 s: the write is not confirmed/,
  );
  assert.deepEqual(outcome.execution.restores.map((r) => r.device), [H(2), H(1)]);
  assert.deepEqual(await originals(f.sim, [H(1), H(2)]), [h1, h2]);
  await auditIntact(f.audit);
});

Deno.test("an abort mid-scan stops the scan, restores the original and saves the data taken", async () => {
  const controller = new AbortController();
  await using f = await fixture({
    faults: { afterWrite: (n) => n === 3 && controller.abort(new Error("cancelled by Ctrl-C")) },
  });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const outcome = await f.service.propose(
    {
      description: "corrector scan",
      actions: [{
        type: "scan",
        writeDevice: H(1),
        start: h1,
        stop: h1 + 1,
        steps: 6,
        readDevices: BPMS,
        dwellSeconds: 0,
      }],
    },
    new ApproveAll(),
    controller.signal,
  );
  assertExecuted(outcome, "aborted");
  const e = outcome.execution;
  assert.match(e.errors[0] ?? "", /aborted: cancelled by Ctrl-C/);
  // The scan is in the results all the same, with every point the control system was sent.
  assert.equal(e.results[0]?.ok, false);
  assert.deepEqual(e.results[0]?.written, f.cs.writes.slice(0, 3).map((w) => w.value));
  assert.equal(e.restores.length, 1);
  assert.equal(e.restores[0]?.readbackDevice, "LINAC:COR:H01:RDBK");
  assert.ok(Math.abs((e.restores[0]?.readback as number) - h1) <= 0.001);
  assert.equal(await valueOf(f.sim, H(1)), h1);
  assert.equal(e.csvFiles.length, 1);
  const csv = (await Deno.readTextFile(e.csvFiles[0] as string)).trim().split("\n");
  assert.equal(csv[0], `time,${H(1)},${H(1)}:readback,${BPMS.join(",")}`);
  assert.ok(csv.length >= 3, "the points measured before the abort are kept");
  await auditIntact(f.audit);
});

Deno.test("a restore never jumps further than max_step: it ramps back", async () => {
  const controller = new AbortController();
  await using f = await fixture({
    faults: { afterWrite: (n) => n === 5 && controller.abort(new Error("stop")) },
  });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const outcome = await f.service.propose(
    {
      description: "walk up in steps",
      actions: [0.4, 0.8, 1.2, 1.6, 2.0].flatMap((d) => [
        { type: "write", device: H(1), value: Number((h1 + d).toFixed(3)), reason: "walk" },
        { type: "wait", seconds: 0 },
      ]).slice(0, -1),
    },
    new ApproveAll(),
    controller.signal,
  );
  assert.equal(outcome.status, "aborted");
  const writes = f.cs.writes.map((w) => w.value as number);
  const steps = writes.slice(1).map((v, i) => Math.abs(v - (writes[i] as number)));
  assert.ok(steps.every((s) => s <= 0.5 + 1e-9), `steps ${steps}`);
  assert.equal(await valueOf(f.sim, H(1)), h1);
});

Deno.test("a completed plan runs its rollback; without a failure nothing else is restored", async () => {
  await using f = await fixture();
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const outcome = await f.service.propose(
    {
      description: "bump and come back",
      actions: [
        { type: "write", device: H(1), value: h1 + 0.2, reason: "bump" },
        { type: "wait", seconds: 0 },
        { type: "read", devices: BPMS },
      ],
      rollback: [{ type: "write", device: H(1), value: h1, reason: "restore" }],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "completed");
  assert.equal(outcome.execution.rollback.length, 1);
  assert.equal(outcome.execution.restores.length, 0);
  assert.equal(outcome.execution.results[2]?.readings?.length, 2);
  assert.equal(await valueOf(f.sim, H(1)), h1);
});

Deno.test("a plan that says so aborts when a read device goes MAJOR, and restores", async () => {
  await using f = await fixture();
  // The corrector ramps at 1 mrad/s: let two seconds pass after each write, as they would.
  f.cs.faults = { afterWrite: () => f.clock.advance(2_000) };
  const h4 = (await valueOf(f.sim, H(4))) as number;
  // LINAC:BPM:13:X moves about -4 mm per mrad of H04: it leaves its ±2 mm band within 0.5 mrad.
  const actions = Array.from({ length: 6 }, (_, i) => [
    { type: "write", device: H(4), value: Number((h4 + 0.1 * (i + 1)).toFixed(3)), reason: "walk" },
    { type: "read", devices: ["LINAC:BPM:13:X"] },
  ]).flat();
  const outcome = await f.service.propose(
    { description: "walk to the edge", actions, abortOnSeverity: "MAJOR" },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  assert.match(
    outcome.execution.errors[0] ?? "",
    /LINAC:BPM:13:X went MAJOR \((HIHI|LOLO)\); the plan aborts at MAJOR/,
  );
  assert.ok(outcome.execution.results.length < actions.length, "it stopped early");
  assert.equal(outcome.execution.abortedBy, "alarm");
  assert.equal(await valueOf(f.sim, H(4)), h4);
});

Deno.test("a plan that no longer passes preflight at execution time writes nothing", async () => {
  await using f = await fixture();
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const plan = {
    description: "bump",
    actions: [{ type: "write", device: H(1), value: h1 + 0.4, reason: "bump" }],
  };
  // Between approval and execution someone else moves the corrector.
  const approver = {
    async decide(p: import("../../src/plan_model/preflighted.ts").PreflightedPlan) {
      await f.sim.write(H(1), h1 - 0.3);
      return { decision: "approved" as const, plan: p.plan, planHash: p.hash, decidedBy: "test" };
    },
  };
  const outcome = await f.service.propose(plan, approver, never());
  assertExecuted(outcome, "refused");
  assert.match(
    outcome.execution.violations[0]?.message ?? "",
    /step of 0\.7 mrad .* exceeds max_step/,
  );
  assert.equal(f.cs.attempts, 0);
});

Deno.test("read-only plans run without asking, and are audited", async () => {
  await using f = await fixture();
  const approver = new ApproveAll();
  const outcome = await f.service.propose(
    {
      description: "look",
      actions: [{ type: "read", devices: BPMS }, { type: "wait", seconds: 0 }],
    },
    approver,
    never(),
  );
  assert.equal(outcome.status, "completed");
  assert.equal(approver.shown.length, 0, "the approver was not asked");
  const lines = (await Deno.readTextFile((await f.audit.files())[0] as string)).trim().split("\n");
  assert.equal(JSON.parse(lines.at(-1) as string).decidedBy, "policy: read-only plan");
});

Deno.test("progress is reported per action and per scan point", async () => {
  await using f = await fixture();
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const progress: string[] = [];
  await f.service.propose(
    {
      description: "scan",
      actions: [
        { type: "read", devices: BPMS },
        {
          type: "scan",
          writeDevice: H(1),
          start: h1,
          stop: h1 + 0.2,
          steps: 3,
          readDevices: BPMS,
          dwellSeconds: 0,
        },
      ],
      rollback: [{ type: "write", device: H(1), value: h1, reason: "back" }],
    },
    new ApproveAll(),
    never(),
    (ev) => ev.type === "plan_progress" && progress.push(`${ev.step}/${ev.total}`),
  );
  assert.deepEqual(progress, ["1/4", "2/4", "3/4", "4/4"]);
});

Deno.test("on the simulator a quadrupole is confirmed by its catalogue readback, the injection switch by nothing, and the audit says so", async () => {
  await using f = await fixture();
  const q = "LINAC:QUAD:01:CURRENT";
  const current = (await valueOf(f.sim, q)) as number;
  const outcome = await f.service.propose(
    {
      description: "quad and injection",
      actions: [
        { type: "write", device: q, value: Number((current + 1).toFixed(2)), reason: "focus" },
        { type: "write", device: "TIMING:INJ:ENABLE", value: "DISABLED", reason: "pause" },
      ],
      rollback: [
        { type: "write", device: "TIMING:INJ:ENABLE", value: "ENABLED", reason: "resume" },
      ],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "completed");
  const [quad, inj] = outcome.execution.results;
  assert.equal(quad?.confirmation?.status, "confirmed");
  assert.equal(quad?.confirmation?.readbackDevice, "LINAC:QUAD:01:RDBK");
  assert.deepEqual(inj?.confirmation, {
    status: "accepted",
    readbackDevice: null,
    readback: "DISABLED",
  });
  assert.match(
    outcome.execution.rollback[0]?.detail ?? "",
    /setpoint accepted, no readback device/,
  );
  const lines = (await Deno.readTextFile((await f.audit.files())[0] as string)).trim().split("\n");
  const done = JSON.parse(lines.at(-1) as string);
  assert.equal(done.status, "completed");
  assert.deepEqual(
    done.results.actions.map((r: { confirmation?: { readbackDevice: string | null } }) =>
      r.confirmation?.readbackDevice
    ),
    ["LINAC:QUAD:01:RDBK", null],
  );
  await auditIntact(f.audit);
});
