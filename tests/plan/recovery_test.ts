/**
 * The plan that puts back what an unfinished plan changed, where its
 * originals come from (the keyed audit, never the marker alone), and what
 * counts as restored.
 */
import assert from "node:assert/strict";
import {
  buildRecoveryPlan,
  checkRun,
  notRestored,
  recoveryDescription,
} from "../../src/plan/recovery.ts";
import type { RunMarker } from "../../src/plan/run_journal.ts";
import { isRunId, isRunIdPrefix } from "../../src/plan/run_journal.ts";
import { findWriteAhead } from "../../src/plan/write_ahead.ts";
import { parseLimits } from "../../src/safety/limits.ts";
import { AuditLog } from "../../src/safety/audit.ts";
import { loadKey } from "../../src/safety/keys.ts";
import { parsePlan } from "../../src/plan_model/plan.ts";
import type { Reading, Value } from "../../src/adapters/adapter.ts";
import { tempDir } from "../support/temp.ts";

const RUN = "0f0e0d0c-0b0a-4909-8807-060504030201";
const HASH = "ab".repeat(32);
const marker = (originals: RunMarker["originals"], extra: Partial<RunMarker> = {}): RunMarker => ({
  run: RUN,
  planHash: HASH,
  description: "trim",
  operator: "op",
  host: "h",
  pid: 1,
  startedAt: "2026-11-24T10:00:00.000Z",
  originals,
  ...extra,
});
const limits = parseLimits(
  `[limits."A:SETPT"]\nmin = -5\nmax = 5\nmax_step = 0.5\n[limits."B:MODE"]\nvalues = ["On", "Off"]\n`,
  "limits.toml",
);

Deno.test("a recovery plan steps back no further than max_step, with a read between steps, newest device first", () => {
  const { plan, skipped } = buildRecoveryPlan(
    marker({}),
    { "B:MODE": "On", "A:SETPT": 0.2 },
    new Map<string, number | string | null>([["A:SETPT", 1.4], ["B:MODE", "Off"]]),
    limits,
    () => 1e-6,
  );
  assert.deepEqual(skipped, []);
  assert.ok(plan);
  assert.ok(parsePlan(plan).ok, "a valid plan");
  const writes = plan.actions.flatMap((a) => a.type === "write" ? [[a.device, a.value]] : []);
  assert.deepEqual(writes, [["A:SETPT", 0.9], ["A:SETPT", 0.4], ["A:SETPT", 0.2], [
    "B:MODE",
    "On",
  ]]);
  assert.equal(plan.actions[1]?.type, "read", "a read between two steps of one device");
  assert.equal(plan.description, recoveryDescription(RUN, HASH));
});

Deno.test("a recovery plan skips devices it cannot restore and is empty when all read their originals", () => {
  const r = buildRecoveryPlan(
    marker({}),
    { "A:SETPT": 0.2, "C:WF": null },
    new Map([["A:SETPT", 0.2]]),
    limits,
    () => 1e-6,
  );
  assert.equal(r.plan, undefined);
  assert.deepEqual(r.skipped.map((s) => s.device), ["C:WF"]);
});

const reading = (device: string, value: Value | null): Reading => ({
  device,
  value,
  units: "",
  timestamp: "",
  severity: value === null ? "INVALID" : "NONE",
  status: value === null ? "DISCONNECTED" : "NO_ALARM",
  ok: value !== null,
  ...(value === null ? { error: "disconnected" } : {}),
});

Deno.test("a run counts as restored only when every original device reads its original within tolerance", () => {
  const originals = { "A:SETPT": 0.5, "B:MODE": "On", "C:WF": [1, 2], "D:GONE": 3, "E:UNK": null };
  const left = notRestored(originals, [
    reading("A:SETPT", 0.5004),
    reading("B:MODE", "Off"),
    reading("C:WF", [1, 2.0001]),
    reading("D:GONE", null),
    reading("E:UNK", 7),
  ], () => 0.001);
  assert.deepEqual(left.map((x) => x.device), ["B:MODE", "D:GONE", "E:UNK"]);
  assert.match(left[0]?.why ?? "", /reads "Off", not its original "On"/);
  assert.match(left[1]?.why ?? "", /cannot be read \(disconnected\)/);
  assert.match(left[2]?.why ?? "", /its original was not recorded/);
  assert.deepEqual(notRestored({ "A:SETPT": 0.5 }, [reading("A:SETPT", 0.5)], () => 0), []);
});

Deno.test("run ids are checked by shape: a whole id or its first 8 or more characters", () => {
  assert.ok(isRunId(RUN));
  assert.ok(isRunIdPrefix(RUN.slice(0, 8)));
  assert.ok(isRunIdPrefix(RUN.slice(0, 13)));
  for (const bad of ["BADNAME", "0f0e0d0", "../../etc/passwd", `${RUN}x`, "0f0e0d0c/0b0a", ""]) {
    assert.equal(isRunIdPrefix(bad), false, bad);
  }
  assert.equal(isRunId(RUN.slice(0, 8)), false);
});

/** A keyed audit log in a temporary state directory, with a write-ahead record of RUN. */
async function keyedAudit(dir: string, originals: Record<string, Value | null>) {
  const audit = new AuditLog(`${dir}/audit`, Date.now, {
    key: () => loadKey(dir, "audit"),
    headPath: `${dir}/audit.head`,
  });
  const base = { operator: "op", host: "h", configHash: "c", plan: {}, decidedBy: "t" };
  await audit.append({
    ...base,
    planHash: HASH,
    decision: "approved",
    run: RUN,
    status: "started",
  });
  await audit.append({
    ...base,
    planHash: HASH,
    decision: "approved",
    run: RUN,
    status: "write_ahead",
    originals,
  });
  return audit;
}

Deno.test("a marker that agrees with the audit's write-ahead record is trusted, its originals taken from the audit", async () => {
  await using dir = await tempDir();
  const audit = await keyedAudit(dir.path, { "A:SETPT": 0.5 });
  const checked = await checkRun(marker({ "A:SETPT": 0.5 }), audit);
  assert.equal(checked.problem, undefined);
  assert.deepEqual(checked.originals, { "A:SETPT": 0.5 });
});

Deno.test("a marker with an edited original, an added or a missing device, another plan, or damage is not trusted", async () => {
  await using dir = await tempDir();
  const audit = await keyedAudit(dir.path, { "A:SETPT": 0.5, "B:MODE": "On" });
  const cases: [RunMarker, RegExp][] = [
    [
      marker({ "A:SETPT": 0.9, "B:MODE": "On" }),
      /disagrees .*A:SETPT was 0\.9 in the marker, 0\.5 in the audit/,
    ],
    [
      marker({ "A:SETPT": 0.5, "B:MODE": "On", "Z:SEPTUM": 1 }),
      /names Z:SEPTUM, which the plan did not record/,
    ],
    [marker({ "A:SETPT": 0.5 }), /leaves out B:MODE/],
    [marker({ "A:SETPT": 0.5, "B:MODE": "On" }, { planHash: "cd".repeat(32) }), /names plan cdcd/],
    [marker({}, { damaged: "its marker x.json is damaged (not JSON)" }), /damaged/],
  ];
  for (const [m, why] of cases) {
    const checked = await checkRun(m, audit);
    assert.match(checked.problem ?? "", why);
    // What the audit holds is still said, so the operator can check by hand.
    assert.deepEqual(checked.originals, { "A:SETPT": 0.5, "B:MODE": "On" });
  }
  const none = await checkRun(marker({}, { run: "1f0e0d0c-0b0a-4909-8807-060504030201" }), audit);
  assert.match(none.problem ?? "", /holds no write-ahead record of run 1f0e0d0c/);
  assert.equal(none.originals, undefined);
});

Deno.test("a write-ahead record edited in the audit, re-hashed or not, is refused", async () => {
  await using dir = await tempDir();
  const audit = await keyedAudit(dir.path, { "A:SETPT": 0.5 });
  const [file] = await audit.files();
  assert.ok(file);
  const text = await Deno.readTextFile(file);
  await Deno.writeTextFile(file, text.replace('"A:SETPT":0.5', '"A:SETPT":0.9'));
  const edited = await findWriteAhead(audit, RUN);
  assert.equal(edited.ok, false);
  assert.match(edited.ok ? "" : edited.why, /does not match its hash: it was edited/);
  // Re-hashed by someone without the key: the MAC gives it away.
  const { entryHash } = await import("../../src/safety/audit.ts");
  const lines = text.trim().split("\n").map((l) => JSON.parse(l));
  const { hash: _, mac, ...body } = lines[1];
  body.originals = { "A:SETPT": 0.9 };
  lines[1] = { ...body, hash: await entryHash(body), mac };
  await Deno.writeTextFile(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const rehashed = await findWriteAhead(audit, RUN);
  assert.match(rehashed.ok ? "" : rehashed.why, /carries a MAC the audit key did not make/);
});
