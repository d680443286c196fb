/**
 * Writes are confirmed by their readback device, within the limits entry's
 * tolerance and settle time, on the plan's timers (a manual clock here: no
 * real waiting); a device without one says "setpoint accepted, no readback
 * device", never "confirmed"; a readback that lags is waited for, one that
 * never arrives or sits outside tolerance fails the step and restores.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import { executePlan, type ExecutionResult } from "../../src/plan/executor.ts";
import { type Plan, planHash } from "../../src/plan_model/plan.ts";
import { preflight } from "../../src/plan/preflight.ts";
import { conventionCandidates } from "../../src/plan/readback.ts";
import { type Limit, LimitsError, LimitsTable, parseLimits } from "../../src/safety/limits.ts";
import { renderPlan } from "../../src/cli/term/plan_table.ts";
import { style } from "../../src/cli/term/style.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { type Follower, LaggingControlSystem } from "../support/lagging_cs.ts";

const T0 = Date.parse("2026-11-20T12:00:00Z");
const PS = { min: -10, max: 10, max_step: 1, tolerance: 0.001 };
const POLICY = { writesEnabled: true, maxScanPoints: 100, maxPlanSeconds: 600, limitsSource: "l" };

function machine(
  followers: Record<string, Follower>,
  limits: Record<string, Limit> = { "PS:*:SETPT": PS, "PS:*:CURRENT": PS, "PS:*:SP": PS },
) {
  const clock = new ManualClock(T0);
  const cs = new LaggingControlSystem(clock, {
    "PS:01:SETPT": 0,
    "PS:02:CURRENT": 0,
    "PS:03:SP": 0,
    MODE: { value: "USER", info: { type: "string" } },
  }, followers);
  const timers = new ClockTimers(clock);
  const table = new LimitsTable({ ...limits, MODE: { values: ["USER", "MD"] } });
  const deps = { cs, limits: table, policy: POLICY, now: () => clock.now(), timers };
  return {
    clock,
    cs,
    timers,
    deps,
    /**
     * Runs the plan on the fake clock: settling takes simulated time (a
     * readback that lags on the manual clock only settles if the executor
     * waits on `timers`; the first test measures that time).
     */
    async run(plan: Plan, signal = new AbortController().signal): Promise<ExecutionResult> {
      return await executePlan(plan, await planHash(plan), { ...deps, signal });
    },
  };
}

const write = (device: string, value: number | string) => ({
  type: "write" as const,
  device,
  value,
  reason: "test",
});
const one = (a: ReturnType<typeof write>): Plan => ({ description: "one write", actions: [a] });

Deno.test("a write waits on the fake clock for its lagging :RDBK, then says confirmed by it", async () => {
  const m = machine({ "PS:01:RDBK": { of: "PS:01:SETPT", tauMs: 1000 } });
  const r = await m.run(one(write("PS:01:SETPT", 0.5)));
  assert.equal(r.status, "completed", r.errors.join("; "));
  const c = r.results[0]?.confirmation;
  assert.equal(c?.status, "confirmed");
  assert.equal(c?.readbackDevice, "PS:01:RDBK");
  assert.ok(Math.abs((c?.readback as number) - 0.5) <= 0.001);
  // 0.5 · e^(−t/1 s) ≤ 0.001 once t ≥ ln(500) s ≈ 6.2 s: waited that long, and not much more.
  const waited = m.clock.now() - T0;
  assert.ok(waited >= 6200 && waited < 6400, `waited ${waited} ms`);
  assert.match(r.results[0]?.detail ?? "", /^PS:01:SETPT = 0\.5 \(confirmed by PS:01:RDBK = 0\.49/);
});

Deno.test("a readback that follows within milliseconds is confirmed within milliseconds, re-read 1, 2, 4 ms apart", async () => {
  // 0.5 · e^(−t/1 ms) ≤ 0.001 once t ≥ 6.2 ms: a fixed 50 ms pause would wait 50.
  const m = machine({ "PS:01:RDBK": { of: "PS:01:SETPT", tauMs: 1 } });
  const r = await m.run(one(write("PS:01:SETPT", 0.5)));
  assert.equal(r.status, "completed", r.errors.join("; "));
  assert.equal(r.results[0]?.confirmation?.status, "confirmed");
  const waited = m.clock.now() - T0;
  assert.ok(waited >= 6.2 && waited < 16, `waited ${waited} ms`);
  assert.deepEqual(m.timers.delays.slice(0, 3), [1, 2, 4]);
});

Deno.test("a readback that never arrives fails the step after the settle time, and the setpoint is restored", async () => {
  const m = machine({ "PS:01:RDBK": { of: "PS:01:SETPT", frozen: true } });
  const r = await m.run({
    description: "two writes",
    actions: [write("PS:02:CURRENT", 0.2), write("PS:01:SETPT", 0.5)],
  });
  assert.equal(r.status, "failed");
  assert.match(
    r.errors[0] ?? "",
    /^readback PS:01:RDBK of PS:01:SETPT reads 0, not 0\.5 within ±0\.001 after 10 s: the write is not confirmed$/,
  );
  // The first write had no readback device: accepted, never "confirmed".
  assert.equal(r.results[0]?.confirmation?.status, "accepted");
  assert.match(r.results[0]?.detail ?? "", /setpoint accepted, no readback device/);
  assert.doesNotMatch(r.results[0]?.detail ?? "", /confirmed/);
  // Both are restored, newest first; the frozen readback reads the original, so its restore is confirmed.
  assert.deepEqual(r.restores.map((x) => [x.device, x.to, x.readbackDevice, x.ok]), [
    ["PS:01:SETPT", 0, "PS:01:RDBK", true],
    ["PS:02:CURRENT", 0, null, true],
  ]);
  assert.deepEqual(m.cs.writes.map((w) => [w.device, w.value]), [
    ["PS:02:CURRENT", 0.2],
    ["PS:01:SETPT", 0.5],
    ["PS:01:SETPT", 0],
    ["PS:02:CURRENT", 0],
  ]);
});

Deno.test("a readback outside the tolerance (a calibration offset) fails the write", async () => {
  const m = machine({ "PS:03:RB": { of: "PS:03:SP", offset: 0.004 } });
  const r = await m.run(one(write("PS:03:SP", 0.3)));
  assert.equal(r.status, "failed");
  assert.match(
    r.errors[0] ?? "",
    /^readback PS:03:RB of PS:03:SP reads 0\.304, not 0\.3 within ±0\.001/,
  );
  // The restore to 0 is not confirmed either: the offset is still there.
  assert.equal(r.restores[0]?.ok, false);
  assert.match(r.restores[0]?.error ?? "", /PS:03:RB .* reads 0\.004, not 0 within ±0\.001/);
});

Deno.test("settle_s in the limits entry bounds the wait; a slower readback fails at that bound", async () => {
  const m = machine(
    { "PS:01:RDBK": { of: "PS:01:SETPT", tauMs: 1000 } },
    { "PS:01:SETPT": { ...PS, settle_s: 2 } },
  );
  const r = await m.run(one(write("PS:01:SETPT", 0.5)));
  assert.equal(r.status, "failed");
  assert.match(r.errors[0] ?? "", /not 0\.5 within ±0\.001 after 2 s: the write is not confirmed/);
});

Deno.test("a device with no readback device is accepted, never confirmed, and the plan table says so", async () => {
  const m = machine({});
  const plan: Plan = {
    description: "mode",
    actions: [write("MODE", "MD"), write("PS:01:SETPT", 1)],
  };
  const checked = await preflight(plan, m.deps);
  assert.deepEqual(checked.readbacks["MODE"], {
    device: null,
    readValue: false,
    source: "none",
    settleMs: 10_000,
  });
  const table = renderPlan(checked, style(false));
  assert.match(table, /│ test +│\n.*│ no readback device +│/);
  assert.doesNotMatch(table, /confirmed by/);
  const r = await m.run(plan);
  assert.equal(r.status, "completed", r.errors.join("; "));
  assert.deepEqual(r.results.map((x) => x.confirmation?.status), ["accepted", "accepted"]);
  assert.equal(r.results[0]?.detail, "MODE = MD (setpoint accepted, no readback device; reads MD)");
  // Conventions were looked for and did not exist: every candidate was read once, at preflight and again at execution.
  assert.ok(m.cs.reads.includes("PS:01:RDBK") && m.cs.reads.includes("MODE:RDBK"));
});

Deno.test("the limits entry names the readback device; the plan table and the result name it", async () => {
  const m = machine(
    {
      "PS:02:DCCT": { of: "PS:02:CURRENT" },
      "PS:02:CURRENT:RDBK": { of: "PS:02:CURRENT", offset: 5 },
    },
    { "PS:02:CURRENT": { ...PS, readback: "PS:02:DCCT" } },
  );
  const plan = one(write("PS:02:CURRENT", 0.7));
  const checked = await preflight(plan, m.deps);
  assert.equal(checked.changes[0]?.readback?.device, "PS:02:DCCT");
  assert.equal(checked.changes[0]?.readback?.source, "limits");
  assert.match(renderPlan(checked, style(false)), /confirmed by PS:02:DCCT/);
  const r = await m.run(plan);
  assert.equal(r.status, "completed", r.errors.join("; "));
  assert.equal(r.results[0]?.confirmation?.readbackDevice, "PS:02:DCCT");
});

Deno.test("a readback device named in the limits that cannot be read fails preflight; nothing is written", async () => {
  const m = machine({}, { "PS:01:SETPT": { ...PS, readback: "PS:01:GONE" } });
  const r = await m.run(one(write("PS:01:SETPT", 0.5)));
  assert.equal(r.status, "refused");
  assert.match(
    r.violations[0]?.message ?? "",
    /^cannot read PS:01:GONE, the readback device the limits entry names for PS:01:SETPT \(unknown device PS:01:GONE\); a write to it could not be confirmed$/,
  );
  assert.deepEqual(m.cs.writes, []);
});

Deno.test("readback = false in the limits: no readback device is looked for, the write is accepted", async () => {
  const m = machine(
    { "PS:01:RDBK": { of: "PS:01:SETPT", frozen: true } },
    { "PS:01:SETPT": { ...PS, readback: false } },
  );
  const r = await m.run(one(write("PS:01:SETPT", 0.5)));
  assert.equal(r.status, "completed", r.errors.join("; "));
  assert.equal(r.results[0]?.confirmation?.status, "accepted");
  assert.ok(!m.cs.reads.includes("PS:01:RDBK"));
});

Deno.test("a setpoint that does not even read back its value fails, naming that it has no readback device", async () => {
  const m = machine({});
  // Another writer puts the setpoint back at once: it never reads the value written.
  const cs = m.cs;
  const inner = cs.write.bind(cs);
  cs.write = async (name, value) => {
    await inner(name, value);
    if (cs.writes.length === 1) await inner(name, 0);
  };
  const r = await m.run(one(write("PS:02:CURRENT", 0.5)));
  assert.equal(r.status, "failed");
  assert.match(
    r.errors[0] ?? "",
    /^PS:02:CURRENT \(no readback device\) reads back 0, not 0\.5 within ±0\.001 after 10 s: the setpoint was not accepted$/,
  );
});

Deno.test("an abort while a readback settles stops the wait and restores", async () => {
  const m = machine({ "PS:01:RDBK": { of: "PS:01:SETPT", tauMs: 60_000 } });
  const controller = new AbortController();
  // Ctrl-C 3 s (simulated) after the write, while its readback is still settling.
  let abortedAt = 0;
  const inner = m.cs.write.bind(m.cs);
  m.cs.write = async (name, value) => {
    await inner(name, value);
    if (m.cs.writes.length === 1) {
      m.timers.setTimeout(() => {
        abortedAt = m.clock.now() - T0;
        controller.abort(new Error("Ctrl-C"));
      }, 3000);
    }
  };
  const r = await m.run(one(write("PS:01:SETPT", 0.5)), controller.signal);
  assert.equal(r.status, "aborted");
  assert.match(r.errors[0] ?? "", /aborted: Ctrl-C/);
  assert.equal(r.restores[0]?.device, "PS:01:SETPT");
  assert.equal(abortedAt, 3000);
  // The restore is written, but its readback lags (τ = 60 s) past the 10 s settle time: not confirmed.
  assert.deepEqual(m.cs.writes.map((w) => w.value), [0.5, 0]);
  assert.equal(r.restores[0]?.ok, false);
});

Deno.test("naming conventions: SETPT/SP/SET to RDBK/RB, -SP to -RB, _SP to _RB, else suffixes", () => {
  const table: [string, string[]][] = [
    ["SR:COR:H01:SETPT", ["SR:COR:H01:RDBK", "SR:COR:H01:RB"]],
    ["SR:PS:Q1:SP", ["SR:PS:Q1:RDBK", "SR:PS:Q1:RB"]],
    ["SR:PS:Q1:I-SP", ["SR:PS:Q1:I-RB"]],
    ["SR:PS:Q1:I_SET", ["SR:PS:Q1:I_RB"]],
    ["LINAC:QUAD:01:CURRENT", [
      "LINAC:QUAD:01:CURRENT:RDBK",
      "LINAC:QUAD:01:CURRENT:RB",
      "LINAC:QUAD:01:CURRENT-RB",
      "LINAC:QUAD:01:CURRENT_RB",
    ]],
    ["sr/ps/q1/current_sp", ["sr/ps/q1/current_rb"]],
    ["sys/tg_test/1/ampli", ["sys/tg_test/1/ampli-rb", "sys/tg_test/1/ampli_rb"]],
  ];
  for (const [name, want] of table) assert.deepEqual(conventionCandidates(name), want, name);
});

Deno.test("limits: readback names one device on exact entries only, never the device itself; settle_s is bounded", () => {
  const bad: [string, RegExp][] = [
    [
      `[limits."PS:*:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\ncatch_all = true\nreadback = "PS:01:RDBK"\n`,
      /l\.toml:1: limits\."PS:\*:SETPT"\.readback: names one device, but the entry is a pattern matching many/,
    ],
    [
      `[limits."PS:01:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\nreadback = "PS:01:SETPT"\n`,
      /readback: a device cannot be its own readback/,
    ],
    [
      `[limits."PS:01:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\nreadback = "PS:0?:RDBK"\n`,
      /readback: "PS:0\?:RDBK" is a pattern; name one device/,
    ],
    [
      `[limits."PS:01:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\nsettle_s = 3601\n`,
      /limits\."PS:01:SETPT"\.settle_s: .*3600/,
    ],
    [`[limits."PS:01:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\nsettle_s = nan\n`, /settle_s/],
    [`[limits."PS:01:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\nsettle_s = 0\n`, /settle_s/],
  ];
  for (const [text, message] of bad) {
    assert.throws(
      () => parseLimits(text, "l.toml"),
      (e) => e instanceof LimitsError && message.test(e.message),
      text,
    );
  }
  const ok = parseLimits(
    `[limits."PS:*:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\ncatch_all = true\nreadback = false\nsettle_s = 30\n` +
      `[limits."PS:01:SETPT"]\nmin = 0\nmax = 1\nmax_step = 1\nreadback = "PS:01:DCCT"\n`,
    "l.toml",
  );
  assert.equal(ok.lookup("PS:01:SETPT")?.readback, "PS:01:DCCT");
  assert.equal(ok.lookup("PS:02:SETPT")?.readback, false);
  assert.equal(ok.lookup("PS:02:SETPT")?.settle_s, 30);
});
