/**
 * A recovery plan is bound to its run by id, not by its words, and closes
 * the run only when every device reads its original afterwards: a partial
 * recovery (some steps chosen at the prompt) leaves the run open, and a
 * plan that copies a recovery's description closes nothing.
 */
import assert from "node:assert/strict";
import { planHash } from "../../src/plan_model/plan.ts";
import type { Plan } from "../../src/plan_model/plan.ts";
import type { Approver } from "../../src/safety/approval.ts";
import { ApproveAll, assertExecuted, fixture, valueOf } from "./fixture.ts";

const H = (n: number) => `LINAC:COR:H0${n}:SETPT`;
const RUN = "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const never = () => new AbortController().signal;

/** What a plan killed mid-way leaves: devices off their originals, its write-ahead record, its marker. */
async function killedRun(f: Awaited<ReturnType<typeof fixture>>) {
  const originals = {
    [H(1)]: (await valueOf(f.sim, H(1))) as number,
    [H(2)]: (await valueOf(f.sim, H(2))) as number,
  };
  const planHash = "9f".repeat(32);
  await f.audit.append({
    operator: "tester",
    host: "testhost",
    configHash: "c".repeat(64),
    plan: { description: "two trims", actions: [] },
    planHash,
    decision: "approved",
    decidedBy: "test",
    run: RUN,
    status: "write_ahead",
    originals,
  });
  await f.sim.write(H(1), originals[H(1)]! + 0.3);
  await f.sim.write(H(2), originals[H(2)]! + 0.3);
  await Deno.mkdir(`${f.dir}/running`, { recursive: true });
  await Deno.writeTextFile(
    `${f.dir}/running/${RUN}.json`,
    JSON.stringify({
      run: RUN,
      planHash,
      description: "two trims",
      operator: "tester",
      host: "testhost",
      pid: 1,
      startedAt: new Date(f.clock.now()).toISOString(),
      originals,
    }),
  );
  f.clock.advance(60_000); // the readbacks settle where the plan left them
  return originals;
}

/** Approves only the steps that write `device` (and the final read), as choosing steps does. */
function chooseSteps(device: string): Approver {
  return {
    async decide(p) {
      const plan: Plan = {
        ...p.plan,
        actions: p.plan.actions.filter((a) => a.type !== "write" || a.device === device),
      };
      return { decision: "partial", plan, planHash: await planHash(plan), decidedBy: "test" };
    },
  };
}

Deno.test("a recovery of which the operator chose only some steps leaves the run open, saying which device is not back", async () => {
  await using f = await fixture({ journal: true });
  const originals = await killedRun(f);
  const [run] = await f.service.unfinished();
  assert.ok(run?.originals && run.problem === undefined, JSON.stringify(run));
  const built = await f.service.recoveryPlan(
    run as typeof run & { originals: Record<string, number> },
  );
  assert.ok(built.plan);
  const outcome = await f.service.propose(built.plan, chooseSteps(H(1)), never());
  assertExecuted(outcome, "completed");
  assert.equal(outcome.recovery?.closed, false);
  assert.deepEqual(outcome.recovery?.notRestored?.map((x) => x.device), [H(2)]);
  assert.match(
    outcome.execution.errors.join("\n"),
    /run 5a1b2c3d-.* stays open: .*LINAC:COR:H02:SETPT/,
  );
  assert.equal(await valueOf(f.sim, H(1)), originals[H(1)]);
  assert.equal((await f.service.unfinished()).length, 1, "the run stays open");
  // The whole recovery, approved: verified at the originals, and closed.
  const whole = await f.service.propose(built.plan, new ApproveAll(), never());
  assertExecuted(whole, "completed");
  assert.deepEqual(whole.recovery, { run: RUN, closed: true });
  assert.deepEqual(await f.service.unfinished(), []);
});

Deno.test("a plan that copies a recovery's description closes no run", async () => {
  await using f = await fixture({ journal: true });
  const originals = await killedRun(f);
  const [run] = await f.service.unfinished();
  const built = await f.service.recoveryPlan(
    run as NonNullable<typeof run> & { originals: Record<string, number> },
  );
  assert.ok(built.plan);
  // Same words, other steps: it puts H02 back, and says it is the recovery.
  const copycat = {
    description: built.plan.description,
    actions: [{ type: "write", device: H(2), value: originals[H(2)], reason: "copy" }],
  };
  const outcome = await f.service.propose(copycat, new ApproveAll(), never());
  assertExecuted(outcome, "completed");
  assert.equal(outcome.recovery, undefined);
  assert.equal((await f.service.unfinished()).length, 1, "the run stays open");
  const entries = (await Deno.readTextFile((await f.audit.files())[0] as string)).split("\n");
  assert.ok(!entries.some((l) => l.includes('"recovered"')));
});
