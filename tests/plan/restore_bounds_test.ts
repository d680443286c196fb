/**
 * A restore writes only what undoes this run: the devices it sent writes
 * to, and values within the limits or between a device's original and what
 * the run sent it. A restore is the one write a kill switch turned off
 * allows, and each of its steps is worked out from the value read live, so
 * a gateway that answers with another channel's value must not be able to
 * walk a device there.
 */
import assert from "node:assert/strict";
import type { Reading } from "../../src/adapters/adapter.ts";
import { ApproveAll, assertExecuted, fixture, switches, valueOf } from "./fixture.ts";

const H1 = "LINAC:COR:H01:SETPT";
const H2 = "LINAC:COR:H02:SETPT";
const never = () => new AbortController().signal;

/** A reading of `device` that says `value` whatever the device holds. */
function lie(r: Reading, device: string, value: number): Reading {
  return r.device === device ? { ...r, value } : r;
}

Deno.test("a device whose step is refused at its write is not restored: the run never wrote it, whatever it reads afterwards", async () => {
  await using f = await fixture();
  const [h1, h2] = [await valueOf(f.sim, H1), await valueOf(f.sim, H2)] as [number, number];
  // The gateway says H02 is 1.5 A away on the writer's read of it, and tells the truth after.
  let reads = 0;
  const read = f.cs.read.bind(f.cs);
  f.cs.read = async (names, signal) => {
    const readings = await read(names, signal);
    if (f.cs.writes.length === 0 || names.join() !== H2) return readings;
    return ++reads === 1 ? readings.map((r) => lie(r, H2, h2 + 1.5)) : readings;
  };
  const outcome = await f.service.propose(
    {
      description: "two bumps",
      actions: [
        { type: "write", device: H1, value: h1 + 0.1, reason: "bump" },
        { type: "write", device: H2, value: h2 + 0.1, reason: "bump" },
      ],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  assert.match(outcome.execution.errors.join("\n"), /exceeds max_step/);
  assert.deepEqual(outcome.execution.restores.map((r) => [r.device, r.ok]), [[H1, true]]);
  assert.deepEqual(f.cs.writes.map((w) => w.device), [H1, H1]);
  assert.equal(await valueOf(f.sim, H2), h2);
});

Deno.test("with the kill switch turned off before a write, the device not yet written is left alone and only what was written is restored", async () => {
  let on = true;
  await using f = await fixture({
    safety: switches(() => on),
    faults: { afterWrite: () => (on = false) },
  });
  const [h1, h2] = [await valueOf(f.sim, H1), await valueOf(f.sim, H2)] as [number, number];
  const outcome = await f.service.propose(
    {
      description: "two bumps",
      actions: [
        { type: "write", device: H1, value: h1 + 0.1, reason: "bump" },
        { type: "write", device: H2, value: h2 + 0.1, reason: "bump" },
      ],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "aborted");
  assert.equal(outcome.execution.abortedBy, "kill_switch");
  assert.deepEqual(outcome.execution.restores.map((r) => [r.device, r.ok]), [[H1, true]]);
  assert.deepEqual(f.cs.writes.map((w) => [w.device, w.value]), [[H1, h1 + 0.1], [H1, h1]]);
});

Deno.test("a restore that reads its device at another channel's value writes nothing outside the limits and what the run moved it through, and says so", async () => {
  await using f = await fixture({ faults: { failOnWrite: 2 } });
  const [h1, h2] = [await valueOf(f.sim, H1), await valueOf(f.sim, H2)] as [number, number];
  // Once the plan has failed, every read of H01 returns -1000 (another channel's value).
  const read = f.cs.read.bind(f.cs);
  f.cs.read = async (names, signal) => {
    const readings = await read(names, signal);
    return f.cs.attempts >= 2 ? readings.map((r) => lie(r, H1, -1000)) : readings;
  };
  const outcome = await f.service.propose(
    {
      description: "two bumps",
      actions: [
        { type: "write", device: H1, value: h1 + 0.3, reason: "bump" },
        { type: "write", device: H2, value: h2 + 0.1, reason: "bump" },
      ],
    },
    new ApproveAll(),
    never(),
  );
  assertExecuted(outcome, "failed");
  const restore = outcome.execution.restores.find((r) => r.device === H1);
  assert.equal(restore?.ok, false);
  assert.match(
    restore?.error ?? "",
    /refused to restore LINAC:COR:H01:SETPT: it reads -1000, and the next step, -999\.5, is outside its limits/,
  );
  for (const w of f.cs.writes) {
    assert.ok(Math.abs(w.value as number) <= 2, `${w.device} = ${w.value} is outside the limits`);
  }
  // H02's write was sent and failed, so it may have landed: its restore writes its original.
  assert.deepEqual(f.cs.writes.map((w) => [w.device, w.value]), [[H1, h1 + 0.3], [H2, h2]]);
  assert.equal(outcome.execution.restores.find((r) => r.device === H2)?.ok, true);
});
