/**
 * A plan on the EPICS adapter (fake pvws gateway): a write the gateway never
 * confirms fails the plan, and what was written before is restored.
 */
import assert from "node:assert/strict";
import { createEpics } from "../../src/adapters/epics/mod.ts";
import { PlanService } from "../../src/plan/service.ts";
import { AuditLog } from "../../src/safety/audit.ts";
import { LimitsTable } from "../../src/safety/limits.ts";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { ApproveAll, assertExecuted } from "./fixture.ts";
import { tempDir } from "../support/temp.ts";

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
