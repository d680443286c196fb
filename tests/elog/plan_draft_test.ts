/**
 * The draft of a plan is made from what the executor did, on a real plan
 * path over the simulator: every written device with its value before the
 * plan, the value written, its readback after and what put it back; the
 * audit ids of the run; nothing for plans that never reached the machine.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ApproveAll, assertExecuted, fixture, valueOf } from "../plan/fixture.ts";
import type { FinishedRun } from "../../src/plan/service.ts";
import { planFacts } from "../../src/elog/plan_facts.ts";
import { planBody, planTitle } from "../../src/elog/plan_body.ts";
import type { Approver } from "../../src/safety/approval.ts";
import type { SpyFaults } from "../support/spy_cs.ts";

const notes = {
  maxChars: 32_000,
  summaryChars: 2000,
  operator: "tester",
  host: "testhost",
  attachments: [] as string[],
};

async function entries(dir: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".jsonl")) continue;
    const text = await Deno.readTextFile(`${dir}/${e.name}`);
    out.push(...text.split("\n").filter(Boolean).map((l) => JSON.parse(l)));
  }
  return out;
}

Deno.test("a completed plan's draft holds every written device before and after, and the run's audit ids", async () => {
  const runs: FinishedRun[] = [];
  await using f = await fixture({ onFinished: (r) => Promise.resolve(void runs.push(r)) });
  const h1 = await valueOf(f.cs, "LINAC:COR:H01:SETPT") as number;
  const h2 = await valueOf(f.cs, "LINAC:COR:H02:SETPT") as number;
  const outcome = await f.service.propose(
    {
      description: "Trim two linac correctors",
      actions: [
        { type: "write", device: "LINAC:COR:H01:SETPT", value: h1 + 0.1, reason: "center BPM 3" },
        { type: "wait", seconds: 1 },
        { type: "write", device: "LINAC:COR:H02:SETPT", value: h2 - 0.1, reason: "close the bump" },
      ],
    },
    new ApproveAll(),
    new AbortController().signal,
  );
  assertExecuted(outcome, "completed");
  assert.equal(runs.length, 1);
  const facts = planFacts(runs[0] as FinishedRun);
  assert.deepEqual(
    facts.writes.map((w) => [w.device, w.before, w.written, w.check, w.readbackDevice, w.restored]),
    [
      ["LINAC:COR:H01:SETPT", h1, h1 + 0.1, "confirmed", "LINAC:COR:H01:RDBK", "no"],
      ["LINAC:COR:H02:SETPT", h2, h2 - 0.1, "confirmed", "LINAC:COR:H02:RDBK", "no"],
    ],
  );
  for (const w of facts.writes) {
    assert.ok(Math.abs((w.after as number) - (w.written as number)) <= 0.001, w.device);
  }
  const audit = await entries(`${f.dir}/audit`);
  assert.deepEqual(
    facts.auditIds,
    audit.map((e) => e.hash),
    "started, write_ahead and the outcome, in order",
  );
  const body = planBody(facts, notes);
  for (const w of facts.writes) {
    assert.match(
      body,
      new RegExp(`\\| \`${w.device}\` \\| ${w.before} \\| ${w.written} \\| ${w.after} \\|`),
    );
  }
  for (const id of facts.auditIds) assert.ok(body.includes(id), id);
  assert.match(planTitle(facts), /^Plan completed: Trim two linac correctors$/);
});

Deno.test("a failed plan's draft says which devices were restored to their originals", async () => {
  const runs: FinishedRun[] = [];
  await using f = await fixture({
    faults: { failOnWrite: 2 },
    onFinished: (r) => Promise.resolve(void runs.push(r)),
  });
  const h1 = await valueOf(f.cs, "LINAC:COR:H01:SETPT") as number;
  const h2 = await valueOf(f.cs, "LINAC:COR:H02:SETPT") as number;
  const outcome = await f.service.propose(
    {
      description: "Two writes, the second refused",
      actions: [
        { type: "write", device: "LINAC:COR:H01:SETPT", value: h1 + 0.1, reason: "a" },
        { type: "write", device: "LINAC:COR:H02:SETPT", value: h2 + 0.1, reason: "b" },
      ],
    },
    new ApproveAll(),
    new AbortController().signal,
  );
  assertExecuted(outcome, "failed");
  const facts = planFacts(runs[0] as FinishedRun);
  const h01 = facts.writes.find((w) => w.device === "LINAC:COR:H01:SETPT");
  assert.equal(h01?.restored, "restored");
  assert.equal(h01?.written, h1, "the last value written is the original, put back");
  const h02 = facts.writes.find((w) => w.device === "LINAC:COR:H02:SETPT");
  assert.equal(h02?.check === "not confirmed" || h02?.restored === "restored", true);
  const body = planBody(facts, notes);
  assert.match(body, /\*\*Outcome:\*\* failed: .*; 2 devices written, .*restored/);
  assert.match(body, /restored to the original/);
});

Deno.test("plans that never reached the machine leave no draft: read-only, rejected, failing preflight", async () => {
  const runs: FinishedRun[] = [];
  await using f = await fixture({ onFinished: (r) => Promise.resolve(void runs.push(r)) });
  const signal = new AbortController().signal;
  await f.service.propose(
    {
      description: "look",
      actions: [{ type: "read", devices: ["LINAC:COR:H01:SETPT"] }],
    },
    new ApproveAll(),
    signal,
  );
  const reject: Approver = {
    decide: (p) =>
      Promise.resolve({
        decision: "rejected",
        plan: p.plan,
        planHash: p.hash,
        decidedBy: "test",
        reason: "no",
      }),
  };
  await f.service.propose(
    {
      description: "refused",
      actions: [{ type: "write", device: "LINAC:COR:H01:SETPT", value: 0, reason: "x" }],
    },
    reject,
    signal,
  );
  await f.service.propose(
    {
      description: "out of limits",
      actions: [{ type: "write", device: "LINAC:COR:H01:SETPT", value: 99, reason: "x" }],
    },
    new ApproveAll(),
    signal,
  );
  assert.deepEqual(runs, []);
});

Deno.test("a scan's draft names the scan and its data file", async () => {
  const runs: FinishedRun[] = [];
  await using f = await fixture({ onFinished: (r) => Promise.resolve(void runs.push(r)) });
  const phase = await valueOf(f.cs, "RF:PHASE:SETPT") as number;
  const outcome = await f.service.propose(
    {
      description: "phase scan",
      actions: [{
        type: "scan",
        writeDevice: "RF:PHASE:SETPT",
        start: phase,
        stop: phase - 2,
        steps: 3,
        readDevices: ["DIAG:ENERGY:MEAS"],
        dwellSeconds: 0.1,
      }],
      rollback: [{ type: "write", device: "RF:PHASE:SETPT", value: phase, reason: "back" }],
    },
    new ApproveAll(),
    new AbortController().signal,
  );
  assertExecuted(outcome, "completed");
  const facts = planFacts(runs[0] as FinishedRun);
  assert.equal(facts.csvFiles.length, 1);
  const row = facts.writes[0];
  assert.equal(row?.restored, "rollback");
  assert.equal(row?.before, phase);
  const name = (facts.csvFiles[0] as string).split("/").at(-1) as string;
  const body = planBody(facts, { ...notes, attachments: facts.csvFiles });
  assert.ok(body.includes(`data \`${name}\` (attached)`), body);
  assert.match(body, /`RF:PHASE:SETPT` from .* in 3 points, reading `DIAG:ENERGY:MEAS`/);
});

Deno.test("a scan stopped part-way is said to have stopped, with the last point sent; the writes after it are not listed", async () => {
  const runs: FinishedRun[] = [];
  // The scan's third point is refused by the gateway.
  await using f = await fixture({
    faults: { failOnWrite: 3 },
    onFinished: (r) => Promise.resolve(void runs.push(r)),
  });
  const phase = await valueOf(f.cs, "RF:PHASE:SETPT") as number;
  const h1 = await valueOf(f.cs, "LINAC:COR:H01:SETPT") as number;
  const outcome = await f.service.propose(
    {
      description: "phase scan, then a trim",
      actions: [{
        type: "scan",
        writeDevice: "RF:PHASE:SETPT",
        start: phase,
        stop: phase - 2,
        steps: 5,
        readDevices: ["DIAG:ENERGY:MEAS"],
        dwellSeconds: 0.1,
      }, { type: "write", device: "LINAC:COR:H01:SETPT", value: h1 + 0.1, reason: "trim" }],
    },
    new ApproveAll(),
    new AbortController().signal,
  );
  assertExecuted(outcome, "failed");
  const facts = planFacts(runs[0] as FinishedRun);
  assert.deepEqual(facts.scans.map((s) => s.completed), [false]);
  assert.deepEqual(facts.writes.map((w) => w.device), ["RF:PHASE:SETPT"]);
  const body = planBody(facts, notes);
  assert.match(body, /in 5 points, .*\(stopped before its end\)/);
  assert.match(body, /1 device written/);
  assert.doesNotMatch(body, /\| `LINAC:COR:H01:SETPT`/);
});

Deno.test("a device whose restore failed shows the last value the plan wrote to it, not the original it could not get back to", async () => {
  const runs: FinishedRun[] = [];
  const faults: SpyFaults = { failOnWrite: 2 };
  // After the first write, H01 cannot be read: its restore cannot even start.
  faults.afterWrite = (n) => void (n === 1 && (faults.unreadable = "LINAC:COR:H01:SETPT"));
  await using f = await fixture({
    faults,
    restoreTimeoutMs: 300,
    onFinished: (r) => Promise.resolve(void runs.push(r)),
  });
  const h1 = await valueOf(f.cs, "LINAC:COR:H01:SETPT") as number;
  const h2 = await valueOf(f.cs, "LINAC:COR:H02:SETPT") as number;
  const outcome = await f.service.propose(
    {
      description: "trim, then a refused write",
      actions: [
        { type: "write", device: "LINAC:COR:H01:SETPT", value: h1 + 0.1, reason: "a" },
        { type: "write", device: "LINAC:COR:H02:SETPT", value: h2 + 0.1, reason: "b" },
      ],
    },
    new ApproveAll(),
    new AbortController().signal,
  );
  assertExecuted(outcome, "failed");
  const run = runs[0] as FinishedRun;
  const restore = run.execution.restores.find((r) => r.device === "LINAC:COR:H01:SETPT");
  assert.equal(restore?.ok, false, JSON.stringify(run.execution.restores));
  const h01 = planFacts(run).writes.find((w) => w.device === "LINAC:COR:H01:SETPT");
  assert.equal(h01?.restored, "restore failed");
  assert.equal(h01?.written, h1 + 0.1, "the plan's value is the last one written");
  assert.equal(
    h01?.after,
    run.execution.results[0]?.confirmation?.readback,
    "as its write read back",
  );
  assert.equal(h01?.check, "confirmed");
  assert.match(planBody(planFacts(run), notes), /\| restore FAILED: /);
});
