/**
 * What happens after a plan ends badly: the rollback, the restores, and the
 * limits they must keep to from where the machine really is.
 */
import assert from "node:assert/strict";
import { AuditLog } from "../../src/safety/audit.ts";
import { ApproveAll, assertExecuted, fixture, valueOf } from "./fixture.ts";

const H = (n: number) => `LINAC:COR:H0${n}:SETPT`;
const never = () => new AbortController().signal;
const write = (device: string, value: number) => ({ type: "write", device, value, reason: "t" });

Deno.test("after an abort, a rollback checked from the plan's end that does not fit the live values is not run", async () => {
  const controller = new AbortController();
  await using f = await fixture({
    faults: { afterWrite: (n) => n === 2 && controller.abort(new Error("stop")) },
  });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  // Up in 0.5 steps to +2.0 above; the rollback ramps down from the top, one step at a time.
  const up = [0.5, 1.0, 1.5, 2.0].map((d) => Number((h1 + d).toFixed(3)));
  const outcome = await f.service.propose(
    {
      description: "walk up and back",
      actions: up.flatMap((v) => [write(H(1), v), { type: "wait", seconds: 0 }]).slice(0, -1),
      rollback: [...up].reverse().slice(1).map((v) => write(H(1), v)).concat([write(H(1), h1)])
        .flatMap((a) => [a, { type: "wait", seconds: 0 }]).slice(0, -1),
    },
    new ApproveAll(),
    controller.signal,
  );
  assertExecuted(outcome, "aborted");
  assert.match(
    outcome.execution.errors.join("\n"),
    /rollback not run: rollback\[0\] would move LINAC:COR:H01:SETPT away from its original -0\.154 \(to 1\.346, from 0\.846\); the originals are restored instead/,
  );
  assert.equal(outcome.execution.rollback.length, 0);
  // No write ever stepped more than max_step, and the original is back.
  const values = [h1, ...f.cs.writes.map((w) => w.value as number)];
  assert.ok(
    values.slice(1).every((v, i) => Math.abs(v - (values[i] as number)) <= 0.5 + 1e-9),
    `${values}`,
  );
  assert.equal(await valueOf(f.sim, H(1)), h1);
});

Deno.test("after a failure, a rollback that fits runs, and devices it does not cover are restored", async () => {
  await using f = await fixture({ faults: { failOnWrite: 3 } });
  const [h1, h2] = [(await valueOf(f.sim, H(1))) as number, (await valueOf(f.sim, H(2))) as number];
  const outcome = await f.service.propose(
    {
      description: "two bumps and a third that fails",
      actions: [write(H(1), h1 + 0.1), write(H(2), h2 + 0.1), write(H(3), 0)],
      rollback: [write(H(1), h1)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  assert.equal(outcome.execution.rollback.length, 1);
  assert.deepEqual(outcome.execution.restores.map((r) => r.device), [H(3), H(2)]);
  assert.deepEqual([await valueOf(f.sim, H(1)), await valueOf(f.sim, H(2))], [h1, h2]);
});

Deno.test("a rollback that fails makes a completed plan failed, and the originals are restored", async () => {
  await using f = await fixture({ faults: { failOnWrite: 3 } });
  const [h1, h2] = [(await valueOf(f.sim, H(1))) as number, (await valueOf(f.sim, H(2))) as number];
  const outcome = await f.service.propose(
    {
      description: "bumps whose rollback fails",
      actions: [write(H(1), h1 + 0.1), write(H(2), h2 + 0.1)],
      rollback: [write(H(2), h2), { type: "wait", seconds: 0 }, write(H(1), h1)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  assert.match(outcome.execution.errors.join("\n"), /rollback\[0\]: gateway refused/);
  assert.deepEqual([await valueOf(f.sim, H(1)), await valueOf(f.sim, H(2))], [h1, h2]);
});

Deno.test("a rollback that uses up its time does not starve the restores", async () => {
  await using f = await fixture({ faults: { failOnWrite: 2 }, rollbackTimeoutMs: 50 });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  const started = f.clock.now();
  const outcome = await f.service.propose(
    {
      description: "a plan whose rollback waits too long",
      actions: [write(H(1), h1 + 0.1), write(H(2), 0)],
      rollback: [{ type: "read", devices: [H(1)] }, { type: "wait", seconds: 0.3 }, {
        type: "read",
        devices: [H(1)],
      }],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  // The rollback's own waits are added to its budget, so this one completes...
  assert.equal(outcome.execution.rollback.length, 3);
  // ...and every device it did not write is restored on a deadline of its own.
  assert.ok(
    outcome.execution.restores.every((r) => r.ok),
    JSON.stringify(outcome.execution.restores),
  );
  assert.equal(await valueOf(f.sim, H(1)), h1);
  // On the plan's clock: the rollback's wait, and the write and restore settling, nothing more.
  const took = f.clock.now() - started;
  assert.ok(took >= 300 && took < 5_000, `${took} ms`);
});

Deno.test("a written device whose live value cannot be read fails preflight: its step cannot be checked", async () => {
  await using f = await fixture({ faults: { unreadable: H(1) } });
  const outcome = await f.service.propose(
    { description: "x", actions: [write(H(1), 1.9)] },
    new ApproveAll(),
    never(),
  );
  assert.equal(outcome.status, "preflight_failed");
  assert.ok("violations" in outcome);
  assert.match(
    outcome.violations[0]?.message ?? "",
    /cannot read LINAC:COR:H01:SETPT \(disconnected\); its max_step cannot be checked/,
  );
  assert.equal(f.cs.attempts, 0);
});

Deno.test("a device moved by someone else during the plan is not stepped past max_step", async () => {
  await using f = await fixture();
  const h1 = (await valueOf(f.sim, H(1))) as number;
  // After our first write is confirmed by its readback (the corrector ramps 0.1 in 0.1 s),
  // during the wait, another console moves the corrector 0.4 down.
  f.cs.faults.afterWrite = (n) => {
    if (n === 1) {
      f.timers.setTimeout(() => void f.sim.write(H(1), Number((h1 - 0.3).toFixed(3))), 1000);
    }
  };
  const outcome = await f.service.propose(
    {
      description: "two steps up",
      actions: [write(H(1), h1 + 0.1), { type: "wait", seconds: 2 }, write(H(1), h1 + 0.4)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  assert.match(
    outcome.execution.errors[0] ?? "",
    /refused to write LINAC:COR:H01:SETPT = 0\.246: a step of 0\.7 from the live -0\.454 exceeds max_step 0\.5/,
  );
});

Deno.test("a damaged complete last audit line stops every plan before anything is written", async () => {
  await using f = await fixture();
  const h1 = (await valueOf(f.sim, H(1))) as number;
  await f.audit.append({
    operator: "o",
    host: "h",
    configHash: "c",
    planHash: "p",
    plan: {},
    decision: "x",
    decidedBy: "t",
  });
  const [file] = await f.audit.files();
  // A whole line that is not an entry was edited in (a torn tail, without newline, is cut off).
  await Deno.writeTextFile(file as string, '{"torn": \n', { append: true });
  const outcome = await f.service.propose(
    { description: "x", actions: [write(H(1), h1 + 0.1)] },
    new ApproveAll(),
    never(),
  );
  assert.equal(outcome.status, "audit_failed");
  assert.ok(outcome.status === "audit_failed");
  assert.match(
    outcome.error,
    /cannot write the audit log: audit chain broken at .*\.jsonl:2: not valid JSON; nothing can be recorded until it is looked at .*; nothing was written to the machine/,
  );
  assert.equal(f.cs.attempts, 0);
});

Deno.test("two audit logs on one directory appending at once keep one chain", async () => {
  await using f = await fixture();
  const other = new AuditLog(f.audit.dir, () => f.clock.now());
  const record = {
    operator: "o",
    host: "h",
    configHash: "c",
    planHash: "p",
    plan: {},
    decision: "x",
    decidedBy: "t",
  };
  await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? f.audit : other).append(record)));
  const { verifyAudit } = await import("../../src/safety/audit_verify.ts");
  const result = await verifyAudit(await f.audit.files(), true);
  assert.equal(result.ok, true, JSON.stringify(result));
});

/** Reads of `device` fail (no value in time, as a slow gateway) `times` times once `from()` holds. */
function lateReads(
  f: Awaited<ReturnType<typeof fixture>>,
  device: string,
  times: number,
  from: () => boolean,
) {
  let left = times;
  const inner = f.cs.read.bind(f.cs);
  f.cs.read = async (names, signal) => {
    const readings = await inner(names, signal);
    if (!from() || left <= 0 || !names.includes(device)) return readings;
    left--;
    return readings.map((r) =>
      r.device === device
        ? { ...r, ok: false, value: null, error: "no value within the gateway's read timeout" }
        : r
    );
  };
}

Deno.test("a restore whose device answers late is tried again within its budget, and succeeds", async () => {
  await using f = await fixture({ faults: { failOnWrite: 2 } });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  // Once the plan has failed, the first three reads of H01 get no value in time.
  lateReads(f, H(1), 3, () => f.cs.attempts >= 2);
  const outcome = await f.service.propose(
    {
      description: "two bumps, the second fails",
      actions: [write(H(1), h1 + 0.1), write(H(2), 0)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  const restore = outcome.execution.restores.find((r) => r.device === H(1));
  assert.equal(restore?.ok, true, JSON.stringify(restore));
  assert.equal(restore?.attempts, 4);
  assert.equal(await valueOf(f.sim, H(1)), h1);
});

Deno.test("a restore whose device never answers gives up at its budget, saying how often it tried and why", async () => {
  await using f = await fixture({ faults: { failOnWrite: 2 }, restoreTimeoutMs: 2000 });
  const h1 = (await valueOf(f.sim, H(1))) as number;
  lateReads(f, H(1), Infinity, () => f.cs.attempts >= 2);
  const outcome = await f.service.propose(
    {
      description: "two bumps, the second fails",
      actions: [write(H(1), h1 + 0.1), write(H(2), 0)],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  const restore = outcome.execution.restores.find((r) => r.device === H(1));
  assert.equal(restore?.ok, false);
  assert.match(
    restore?.error ?? "",
    /^not restored within its 2 s \((\d+) tries; the last: cannot read LINAC:COR:H01:SETPT \(no value within the gateway's read timeout\)/,
  );
  const tries = Number(/\((\d+) tries/.exec(restore?.error ?? "")?.[1]);
  assert.ok(tries >= 2, `tried ${tries} times`);
});
