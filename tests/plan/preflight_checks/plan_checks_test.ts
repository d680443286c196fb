/**
 * The checks of a plan's steps, each on its own over a walked plan, and
 * preflight as a whole: every violation names a check from
 * `PREFLIGHT_CHECKS`.
 */
import assert from "node:assert/strict";
import type { DeviceInfo, Value } from "../../../src/adapters/adapter.ts";
import { LimitsTable } from "../../../src/safety/limits.ts";
import { parsePlan, type Plan } from "../../../src/plan_model/plan.ts";
import {
  PREFLIGHT_CHECKS,
  type SafetyPolicy,
  violationText,
} from "../../../src/plan_model/preflighted.ts";
import {
  currentValueKnown,
  deviceExists,
  estimateSeconds,
  maxPlanSeconds,
  maxScanPoints,
  noRepeatedWrite,
  readbackFound,
  valueChecks,
} from "../../../src/plan/preflight_checks/plan_checks.ts";
import { type Facts, planSteps, walkWrites } from "../../../src/plan/preflight_checks/walk.ts";
import { preflight } from "../../../src/plan/preflight.ts";
import { createSimulator } from "../../../src/adapters/simulator/mod.ts";

const POLICY: SafetyPolicy = {
  writesEnabled: true,
  maxScanPoints: 50,
  maxPlanSeconds: 600,
  limitsSource: "limits.toml",
};
const LIMITS = new LimitsTable({ "COR:*": { min: -2, max: 2, max_step: 0.5 } });

function info(device: string, exists = true): DeviceInfo {
  return {
    device,
    exists,
    description: "",
    units: "A",
    writable: true,
    type: "number",
    subsystem: "COR",
  };
}

function facts(live: Record<string, Value | null>, missing: string[] = []): Facts {
  const names = [...Object.keys(live), ...missing, "BPM:X"];
  return {
    info: new Map(names.map((n) => [n, info(n, !missing.includes(n))])),
    live,
    unreadableWhy: new Map(missing.map((n) => [n, "unknown device"])),
    limits: LIMITS,
    policy: POLICY,
  };
}

function plan(raw: unknown): Plan {
  const parsed = parsePlan(raw);
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  return parsed.plan;
}

const write = (device: string, value: number) => ({ type: "write", device, value, reason: "test" });
const read = (...devices: string[]) => ({ type: "read", devices });

Deno.test("no_repeated_write flags back-to-back writes of one device, not ones with a read between or across the rollback", () => {
  const steps = planSteps(plan({
    description: "d",
    actions: [write("COR:H1", 1), write("COR:H1", 1.2), read("BPM:X"), write("COR:H1", 1.4)],
    rollback: [write("COR:H1", 0.8)],
  }));
  const found = noRepeatedWrite(steps);
  assert.deepEqual(found.map((v) => [v.check, v.where]), [["no_repeated_write", "actions[1]"]]);
  assert.match(found[0]?.message ?? "", /written again right after actions\[0\]/);
});

Deno.test("device_exists names each unknown device once, at its first step", () => {
  const steps = planSteps(plan({
    description: "d",
    actions: [read("COR:NOPE"), write("COR:NOPE", 1), read("BPM:X")],
  }));
  const found = deviceExists(steps, facts({}, ["COR:NOPE"]));
  assert.deepEqual(found.map((v) => [v.check, v.where, v.message]), [
    ["device_exists", "actions[0]", "COR:NOPE does not exist"],
  ]);
});

Deno.test("current_value_known refuses a written device with a max_step whose value cannot be read", () => {
  const steps = planSteps(plan({ description: "d", actions: [write("COR:H1", 1)] }));
  const unread = { ...facts({ "COR:H1": null }), unreadableWhy: new Map([["COR:H1", "timeout"]]) };
  const found = currentValueKnown(walkWrites(steps, unread).targets, unread);
  assert.deepEqual(found.map((v) => v.check), ["current_value_known"]);
  assert.match(
    found[0]?.message ?? "",
    /^cannot read COR:H1 \(timeout\); its max_step cannot be checked$/,
  );
  const known = facts({ "COR:H1": 0.8 });
  assert.deepEqual(currentValueKnown(walkWrites(steps, known).targets, known), []);
});

Deno.test("the value checks follow the plan's own writes and number a scan's refused point", () => {
  const f = facts({ "COR:H1": 0 });
  const steps = planSteps(plan({
    description: "d",
    actions: [
      write("COR:H1", 0.5),
      read("BPM:X"),
      write("COR:H1", 1.2), // 0.7 from the 0.5 the plan set: too far
      {
        type: "scan",
        writeDevice: "COR:H1",
        start: 1.2,
        stop: 2.4,
        steps: 3,
        readDevices: ["BPM:X"],
        dwellSeconds: 0,
      },
    ],
  }));
  const found = valueChecks(walkWrites(steps, f).targets, f);
  assert.deepEqual(found.map((v) => [v.check, v.where]), [
    ["max_step", "actions[2]"],
    ["max_step", "actions[3]"],
    ["within_limits", "actions[3]"],
    ["max_step", "actions[3]"],
  ]);
  assert.match(found[1]?.message ?? "", /^scan point 2 of 3: step of 0\.6 A from 1\.2 A/);
});

Deno.test("readback_found names an unreadable readback device at the first change of the device it confirms", () => {
  const f = facts({ "COR:H1": 0, "COR:H2": 0 });
  const steps = planSteps(plan({
    description: "d",
    actions: [write("COR:H2", 0.1), read("BPM:X"), write("COR:H1", 0.1), write("COR:H2", 0.2)],
  }));
  const { changes } = walkWrites(steps, f);
  const found = readbackFound({ "COR:H2": "cannot read COR:H2:RB", "GONE": "gone" }, changes);
  assert.deepEqual(found.map((v) => [v.check, v.where, v.device]), [
    ["readback_found", "actions[0]", "COR:H2"],
    ["readback_found", "plan", "GONE"],
  ]);
  assert.deepEqual(readbackFound({}, changes), []);
});

Deno.test("max_scan_points and max_plan_seconds hold the whole plan to the [safety] settings", () => {
  assert.deepEqual(maxScanPoints(50, POLICY), []);
  assert.deepEqual(maxScanPoints(51, POLICY).map((v) => [v.check, v.where]), [[
    "max_scan_points",
    "plan",
  ]]);
  const steps = planSteps(plan({
    description: "d",
    actions: [{ type: "wait", seconds: 590 }, read("BPM:X")],
    rollback: [{ type: "wait", seconds: 20 }],
  }));
  const seconds = estimateSeconds(steps);
  assert.ok(seconds > 610 && seconds < 611, String(seconds));
  assert.match(maxPlanSeconds(seconds, POLICY)[0]?.message ?? "", /about 610 s; at most 600 s/);
  assert.deepEqual(maxPlanSeconds(599, POLICY), []);
});

Deno.test("a refused plan's violations each name a known check, in the table's line and the JSON", async () => {
  const cs = createSimulator({ seed: 1 });
  const [before] = await cs.read(["LINAC:COR:H01:SETPT"]);
  const from = before?.value as number;
  const checked = await preflight(
    plan({
      description: "d",
      actions: [write("LINAC:COR:H01:SETPT", from + 0.9), write("LINAC:COR:H01:SETPT", from)],
    }),
    {
      cs,
      limits: new LimitsTable({ "LINAC:COR:*": { min: -5, max: 5, max_step: 0.5 } }),
      policy: POLICY,
      now: () => 0,
    },
  );
  assert.equal(checked.ok, false);
  assert.deepEqual(checked.violations.map((v) => v.check), [
    "max_step",
    "no_repeated_write",
    "max_step",
  ]);
  for (const v of checked.violations) assert.ok(v.check in PREFLIGHT_CHECKS, v.check);
  assert.match(
    violationText(checked.violations[0]!),
    /^actions\[0\]: step of 0\.9 .* \[max_step\]$/,
  );
  assert.equal(JSON.parse(JSON.stringify(checked.violations))[1].check, "no_repeated_write");
});
