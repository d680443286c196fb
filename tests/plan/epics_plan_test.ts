/**
 * A plan on the EPICS adapter (fake pvws gateway): a write the gateway never
 * confirms fails the plan, and what was written before is restored.
 */
import assert from "node:assert/strict";
import { createEpics } from "../../src/adapters/epics/mod.ts";
import { conventionCandidates } from "../../src/plan/readback.ts";
import { PlanService } from "../../src/plan/service.ts";
import { AuditLog } from "../../src/safety/audit.ts";
import { LimitsTable } from "../../src/safety/limits.ts";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { ApproveAll, assertExecuted } from "./fixture.ts";
import { tempDir } from "../support/temp.ts";
import type { FakePv } from "../support/facility/fake_pvws.ts";

Deno.test("a plan whose write the gateway cannot confirm is restored", async () => {
  await using fake = startFakeEpics();
  const cs = createEpics({
    pvwsUrl: fake.pvws.url,
    readTimeoutMs: 500,
    writeTimeoutMs: 400,
    monitorLingerMs: 0,
  });
  await using tmp = await tempDir();
  const dir = tmp.path;
  const service = new PlanService({
    cs,
    limits: new LimitsTable({
      "SR:COR:*:SETPT": { min: -2, max: 2, max_step: 0.5, tolerance: 1e-6 },
    }),
    policy: {
      writesEnabled: true,
      maxScanPoints: 100,
      maxPlanSeconds: 60,
      limitsSource: "test limits",
    },
    audit: new AuditLog(`${dir}/audit`),
    identity: { operator: "t", host: "h", configHash: "c" },
    now: () => Date.now(),
    plansDir: `${dir}/plans`,
    autoApproveReadOnly: true,
    readbackTimeoutMs: 500,
  });
  const before = (await cs.read(["SR:COR:H01:SETPT", "SR:COR:H02:SETPT"])).map((r) =>
    r.value as number
  );
  const outcome = await service.propose(
    {
      description: "two corrector bumps",
      actions: [
        {
          type: "write",
          device: "SR:COR:H01:SETPT",
          value: (before[0] as number) + 0.1,
          reason: "a",
        },
        {
          type: "write",
          device: "SR:COR:H02:SETPT",
          value: (before[1] as number) + 0.1,
          reason: "b",
        },
      ],
    },
    new ApproveAll(),
    new AbortController().signal,
  );
  assertExecuted(outcome, "failed");
  assert.match(outcome.execution.errors[0] ?? "", /SR:COR:H02:SETPT not confirmed within 400 ms/);
  assert.deepEqual(outcome.execution.restores.map((r) => [r.device, r.ok]), [
    ["SR:COR:H02:SETPT", true],
    ["SR:COR:H01:SETPT", true],
  ]);
  assert.deepEqual(
    (await cs.read(["SR:COR:H01:SETPT", "SR:COR:H02:SETPT"])).map((r) => r.value),
    before,
  );
  await cs.close();
});

/** A plan service on the fake EPICS facility, with `edit` applied to its PVs. */
async function epicsService(edit: (pvs: Record<string, FakePv>) => void) {
  const fake = startFakeEpics({ edit: (d) => edit(d.pvs) });
  const cs = createEpics({ pvwsUrl: fake.pvws.url, readTimeoutMs: 2000, monitorLingerMs: 0 });
  const tmp = await tempDir();
  const service = new PlanService({
    cs,
    limits: new LimitsTable({
      "SR:COR:*:SETPT": { min: -2, max: 2, max_step: 0.5, tolerance: 0.001 },
    }),
    policy: { writesEnabled: true, maxScanPoints: 100, maxPlanSeconds: 60, limitsSource: "l" },
    audit: new AuditLog(`${tmp.path}/audit`),
    identity: { operator: "t", host: "h", configHash: "c" },
    now: () => Date.now(),
    plansDir: `${tmp.path}/plans`,
    autoApproveReadOnly: true,
    readbackTimeoutMs: 2000,
  });
  const run = (value: number) =>
    service.propose(
      {
        description: "trim H01",
        actions: [{ type: "write", device: "SR:COR:H01:SETPT", value, reason: "trim" }],
      },
      new ApproveAll(),
      new AbortController().signal,
    );
  return {
    fake,
    cs,
    run,
    async [Symbol.asyncDispose]() {
      await cs.close();
      await fake.close();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

const RDBK = "SR:COR:H01:RDBK";

Deno.test("on EPICS a write waits for its :RDBK PV, 300 ms behind, and the result names it", async () => {
  await using e = await epicsService((pvs) => {
    pvs[RDBK] = { value: 0.5, units: "A", readonly: true, follows: "SR:COR:H01:SETPT", lagMs: 300 };
  });
  const outcome = await e.run(0.6);
  assertExecuted(outcome, "completed");
  const c = outcome.execution.results[0]?.confirmation;
  assert.deepEqual(c, { status: "confirmed", readbackDevice: RDBK, readback: 0.6 });
  assert.equal(
    outcome.execution.results[0]?.detail,
    `SR:COR:H01:SETPT = 0.6 (confirmed by ${RDBK} = 0.6)`,
  );
});

Deno.test("on EPICS a :RDBK PV off by more than the tolerance fails the write, and the setpoint goes back", async () => {
  await using e = await epicsService((pvs) => {
    pvs[RDBK] = {
      value: 0.5,
      units: "A",
      readonly: true,
      follows: "SR:COR:H01:SETPT",
      lagMs: 50,
      offset: 0.02,
    };
  });
  const outcome = await e.run(0.6);
  assertExecuted(outcome, "failed");
  assert.match(
    outcome.execution.errors[0] ?? "",
    /^readback SR:COR:H01:RDBK of SR:COR:H01:SETPT reads 0\.62, not 0\.6 within ±0\.001 after 2 s/,
  );
  // The setpoint is written back; its readback still carries the offset, so the restore is not confirmed.
  assert.deepEqual(e.fake.pvws.stats.writes.map((w) => w.value), [0.6, 0.5]);
  assert.equal((await e.cs.read(["SR:COR:H01:SETPT"]))[0]?.value, 0.5);
  assert.equal(outcome.execution.restores[0]?.ok, false);
});

Deno.test("on EPICS a setpoint with no readback PV is accepted, never confirmed", async () => {
  await using e = await epicsService(() => {});
  const outcome = await e.run(0.6);
  assertExecuted(outcome, "completed");
  assert.deepEqual(outcome.execution.results[0]?.confirmation, {
    status: "accepted",
    readbackDevice: null,
    readback: 0.6,
  });
  assert.match(outcome.execution.results[0]?.detail ?? "", /setpoint accepted, no readback device/);
  // Missing candidates are given up after the probe time, once: the executor's preflight reuses it.
  const asked = e.fake.pvws.stats.subscribed.map((n) => n.replace(/^(pva|ca):\/\//, ""));
  for (const candidate of conventionCandidates("SR:COR:H01:SETPT")) {
    assert.equal(asked.filter((n) => n === candidate).length, 1, `${candidate}: ${asked}`);
  }
});
