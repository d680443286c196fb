/**
 * The shift summary counts what the services and the audit hold — the
 * numbers come from them, never from the model — and says which source it
 * could not read; the model's prose is fenced and marked as its own.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ApproveAll, assertExecuted, fixture, T0, valueOf } from "../plan/fixture.ts";
import { shiftBody, shiftFacts } from "../../src/elog/shift.ts";

Deno.test("a shift summary counts the e-log, the alarms and the plans run from the services and the audit", async () => {
  await using f = await fixture();
  const h1 = await valueOf(f.cs, "LINAC:COR:H01:SETPT") as number;
  const signal = new AbortController().signal;
  assertExecuted(
    await f.service.propose(
      {
        description: "trim H01",
        actions: [{ type: "write", device: "LINAC:COR:H01:SETPT", value: h1 + 0.1, reason: "x" }],
      },
      new ApproveAll(),
      signal,
    ),
    "completed",
  );
  await f.service.propose({
    description: "never",
    actions: [{ type: "write", device: "LINAC:COR:H01:SETPT", value: h1, reason: "x" }],
  }, {
    decide: (p) =>
      Promise.resolve({ decision: "rejected", plan: p.plan, planHash: p.hash, decidedBy: "t" }),
  }, signal);
  const from = new Date(T0 - 8 * 3_600_000).toISOString();
  const to = new Date(T0 + 60_000).toISOString();
  const facts = await shiftFacts(f.cs, await f.audit.files(), from, to);
  const elog = await f.sim.logs({ source: "elog", from, to, limit: 10_000 });
  const alarms = await f.sim.logs({ source: "alarm", from, to, limit: 10_000 });
  assert.ok(!("error" in facts.elog) && facts.elog.count === elog.length && elog.length > 0);
  assert.ok(!("error" in facts.alarms) && facts.alarms.count === alarms.length);
  assert.ok(!("error" in facts.plans));
  assert.deepEqual([facts.plans.ran, facts.plans.byOutcome, facts.plans.rejected], [
    1,
    { completed: 1 },
    1,
  ]);
  const body = shiftBody(facts, { maxChars: 32_000, summaryChars: 2000 });
  assert.match(body, new RegExp(`\\*\\*Logbook:\\*\\* ${elog.length} entries \\(`));
  assert.match(body, new RegExp(`\\*\\*Alarms:\\*\\* ${alarms.length} events`));
  assert.match(body, /\*\*Plans:\*\* 1 ran \(completed 1\), 1 rejected/);
  assert.match(body, /- \d\d:\d\d completed: trim H01 \(plan `[0-9a-f]{12}`\)/);
  assert.doesNotMatch(body, /Summary by the model/, "no model, numbers only");
  const withProse = shiftBody(facts, {
    maxChars: 32_000,
    summaryChars: 2000,
    prose: "Quiet shift; 99 trips.\n```\n| fake |",
  });
  const [numbers, prose] = withProse.split("**Summary by the model**");
  assert.equal(numbers, body.trimEnd() + "\n\n---\n\n");
  assert.match(prose ?? "", /\n````text\nQuiet shift; 99 trips\.\n```\n\| fake \|\n````\n$/);
});

Deno.test("a source that cannot be read is named in the summary, not guessed at", async () => {
  await using f = await fixture();
  const broken = {
    ...f.cs,
    kind: "broken",
    read: f.cs.read.bind(f.cs),
    describe: f.cs.describe.bind(f.cs),
    search: f.cs.search.bind(f.cs),
    archive: f.cs.archive.bind(f.cs),
    logs: (q: { source: string }) =>
      q.source === "alarm"
        ? Promise.reject(new Error("alarm logger at http://x is unreachable (refused)"))
        : Promise.resolve([]),
  };
  const facts = await shiftFacts(
    broken as never,
    ["/nonexistent/2026-11-20.jsonl"],
    new Date(T0 - 3_600_000).toISOString(),
    new Date(T0).toISOString(),
  );
  const body = shiftBody(facts, { maxChars: 32_000, summaryChars: 2000 });
  assert.match(body, /\*\*Logbook:\*\* 0 entries \(none\)/);
  assert.match(
    body,
    /\*\*Alarms:\*\* not read \(alarm logger at http:\/\/x is unreachable \(refused\)\)/,
  );
  assert.match(body, /\*\*Plans:\*\* not read \(/);
});
