/**
 * Each value check on its own, then `checkValue`, which runs them in order
 * and names the check behind every problem.
 */
import assert from "node:assert/strict";
import type { DeviceInfo } from "../../../src/adapters/adapter.ts";
import type { LimitEntry } from "../../../src/safety/limits.ts";
import type { SafetyPolicy } from "../../../src/plan_model/preflighted.ts";
import {
  checkValue,
  hasLimits,
  type LimitedInput,
  limitsComplete,
  maxStep,
  valueType,
  withinLimits,
  writable,
  writesEnabled,
} from "../../../src/plan/preflight_checks/value.ts";

const POLICY: SafetyPolicy = {
  writesEnabled: true,
  maxScanPoints: 1000,
  maxPlanSeconds: 3600,
  limitsSource: "limits.toml",
};

const COR: DeviceInfo = {
  device: "COR:H1",
  exists: true,
  description: "corrector",
  units: "A",
  writable: true,
  type: "number",
  subsystem: "COR",
  precision: 3,
};
const MODE: DeviceInfo = { ...COR, device: "MODE", units: "", type: "enum", labels: ["ON", "OFF"] };
const COR_LIMIT: LimitEntry = { pattern: "COR:*", min: -2, max: 2, max_step: 0.5 };
const MODE_LIMIT: LimitEntry = { pattern: "MODE", values: ["ON", "OFF"] };

function input(over: Partial<LimitedInput> = {}): LimitedInput {
  return { d: COR, value: 1, from: 0.8, limit: COR_LIMIT, policy: POLICY, ...over };
}

Deno.test("writes_enabled refuses every value while the kill switch is off, naming who turned it off", () => {
  assert.deepEqual(writesEnabled(input()), []);
  assert.match(
    writesEnabled(input({ policy: { ...POLICY, writesEnabled: false } }))[0] ?? "",
    /writes_enabled = false/,
  );
  const site = { ...POLICY, writesEnabled: false, writesDisabledBy: "the site switch is off" };
  assert.deepEqual(writesEnabled(input({ policy: site })), ["the site switch is off"]);
});

Deno.test("writable refuses a read-only device", () => {
  assert.deepEqual(writable(input()), []);
  assert.deepEqual(writable(input({ d: { ...COR, writable: false } })), ["COR:H1 is read-only"]);
});

Deno.test("has_limits refuses a device with no entry or an entry marked not writable", () => {
  assert.deepEqual(hasLimits(input()), []);
  assert.match(hasLimits({ ...input(), limit: undefined })[0] ?? "", /no entry in limits\.toml/);
  assert.match(
    hasLimits(input({ limit: { ...COR_LIMIT, writable: false } }))[0] ?? "",
    /marked not writable in limits\.toml \(COR:\*\)/,
  );
});

Deno.test("value_type refuses text for a number, a non-finite number, and a number for an enum", () => {
  assert.deepEqual(valueType(input()), []);
  assert.match(valueType(input({ value: "1" }))[0] ?? "", /is a string; COR:H1 takes a number/);
  assert.match(valueType(input({ value: NaN }))[0] ?? "", /NaN is not a finite number/);
  assert.match(valueType(input({ d: MODE, value: 1 }))[0] ?? "", /takes one of its labels/);
  assert.deepEqual(valueType(input({ d: MODE, value: "ON" })), []);
});

Deno.test("limits_complete refuses a number entry without min, max and max_step unless unbounded", () => {
  assert.deepEqual(limitsComplete(input()), []);
  const noStep = { pattern: "COR:*", min: -2, max: 2 };
  assert.match(limitsComplete(input({ limit: noStep }))[0] ?? "", /lacks min, max or max_step/);
  assert.deepEqual(limitsComplete(input({ limit: { ...noStep, unbounded: true } })), []);
});

Deno.test("limits_complete refuses free text without values, and entries that share no values", () => {
  const text = { ...MODE, type: "string" as const, labels: undefined };
  assert.match(
    limitsComplete(input({ d: text, value: "x", limit: { pattern: "MODE" } }))[0] ?? "",
    /lists no values/,
  );
  assert.match(
    limitsComplete(input({ d: MODE, value: "ON", limit: { ...MODE_LIMIT, values: [] } }))[0] ??
      "",
    /share no values/,
  );
  assert.deepEqual(limitsComplete(input({ d: MODE, value: "ON", limit: MODE_LIMIT })), []);
});

Deno.test("an enum device takes only the labels its entry lists: a numeric or unbounded entry opens none", () => {
  const numeric: LimitEntry = { pattern: "MODE", min: 0, max: 2, max_step: 1 };
  for (const limit of [numeric, { pattern: "*", unbounded: true }, { pattern: "MODE" }]) {
    assert.match(
      limitsComplete(input({ d: MODE, value: "ON", limit }))[0] ?? "",
      /^MODE is an enum \(ON, OFF\) but its entry in limits\.toml \(.*\) lists no values; an enum device takes only the labels its entry lists in values$/,
      limit.pattern,
    );
  }
  const kinds = checkValue(MODE, "OFF", "ON", numeric, POLICY).map((p) => p.check);
  assert.deepEqual(kinds, ["limits_complete"]);
  // A listed value the device does not have is not one of its labels.
  const odd = { pattern: "MODE", values: ["ON", "FAULT"] };
  assert.match(
    withinLimits(input({ d: MODE, value: "FAULT", limit: odd }))[0] ?? "",
    /^value "FAULT" is not one of MODE's labels \(ON, OFF\)$/,
  );
  assert.deepEqual(checkValue(MODE, "OFF", "ON", MODE_LIMIT, POLICY), []);
});

Deno.test("within_limits takes the tighter of the file's and the device's own bounds, and names which", () => {
  assert.deepEqual(withinLimits(input()), []);
  assert.match(
    withinLimits(input({ value: 2.5 }))[0] ?? "",
    /^value 2\.5 A is above the maximum 2 A \(limits\.toml: COR:\*\)$/,
  );
  const own = { ...COR, limits: { min: -1 } };
  assert.match(
    withinLimits(input({ d: own, value: -1.5 }))[0] ?? "",
    /below the minimum -1 A \(the device's own limit\)/,
  );
  assert.match(
    withinLimits(input({ d: MODE, value: "STANDBY", limit: MODE_LIMIT }))[0] ?? "",
    /^value "STANDBY" is not one of ON, OFF$/,
  );
});

Deno.test("max_step refuses a step beyond max_step from the value before, and allows it at the edge", () => {
  assert.deepEqual(maxStep(input({ value: 1.3, from: 0.8 })), []);
  assert.match(
    maxStep(input({ value: 1.4, from: 0.8 }))[0] ?? "",
    /^step of 0\.6 A from 0\.8 A exceeds max_step 0\.5 A \(limits\.toml: COR:\*\)$/,
  );
  assert.deepEqual(maxStep(input({ value: 1.4, from: null })), [], "unknown from: not this check");
});

Deno.test("checkValue names the check of every problem and stops at the first gate", () => {
  assert.deepEqual(checkValue(COR, 1, 0.8, COR_LIMIT, POLICY), []);
  const both = checkValue(COR, 2.5, 0.8, COR_LIMIT, POLICY);
  assert.deepEqual(both.map((p) => p.check), ["within_limits", "max_step"]);
  const off = checkValue({ ...COR, writable: false }, 2.5, 0.8, undefined, POLICY);
  assert.deepEqual(off.map((p) => p.check), ["writable"]);
  assert.deepEqual(
    checkValue(COR, "x", 0.8, COR_LIMIT, POLICY).map((p) => p.check),
    ["value_type"],
  );
  assert.deepEqual(
    checkValue(COR, 9, 0.8, { pattern: "COR:*", max: 2 }, POLICY).map((p) => p.check),
    ["limits_complete"],
  );
});

Deno.test("max_step refuses a number written to a device that reads as text: the step cannot be checked", () => {
  assert.match(
    maxStep(input({ from: "1.9" }))[0] ?? "",
    /^COR:H1 reads "1\.9", not a number, so the step to 1 cannot be checked against max_step 0\.5/,
  );
  // Unreadable (null) is current_value_known's to say, not this check's.
  assert.deepEqual(maxStep(input({ from: null })), []);
});
