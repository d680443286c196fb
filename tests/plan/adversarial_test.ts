/**
 * Plans built to get a write past the safety chain. The approver here
 * approves whatever it is shown, so validation, preflight, the hash binding
 * and the executor are what must stop each one: no write may reach the
 * adapter, and every refusal must say precisely why.
 */
import assert from "node:assert/strict";
import { LimitsTable } from "../../src/safety/limits.ts";
import type { Approver } from "../../src/safety/approval.ts";
import { DeferringApprover, RefusingApprover, TokenApprover } from "../../src/safety/approval.ts";
import { ApprovalTokens } from "../../src/safety/approval_token.ts";
import type { SafetyPolicy } from "../../src/plan_model/preflighted.ts";
import { forModel } from "../../src/tools/propose_plan.ts";
import { ApproveAll, fixture, SwapAfterApproval } from "./fixture.ts";

/** What the tokens here are bound to besides the plan. */
const SCOPE = { facility: "simulator seed 1", limits: "" };

const H01 = "LINAC:COR:H01:SETPT";
const BPMS = ["LINAC:BPM:01:X", "LINAC:BPM:02:X"];
type Live = { h01: number };
const write = (device: string, value: unknown, reason = "test") => ({
  type: "write",
  device,
  value,
  reason,
});
const wait = (seconds = 0.01) => ({ type: "wait", seconds });
const read = (devices = BPMS) => ({ type: "read", devices });
const plan = (...actions: unknown[]) => ({ description: "adversarial", actions });
const scan = (start: number, stop: number, steps: number, extra: Record<string, unknown> = {}) => ({
  type: "scan",
  writeDevice: H01,
  start,
  stop,
  steps,
  readDevices: BPMS,
  dwellSeconds: 0,
  ...extra,
});

interface Case {
  name: string;
  plan: (l: Live) => unknown;
  status: "invalid" | "preflight_failed" | "rejected" | "deferred" | "refused";
  message: RegExp;
  policy?: Partial<SafetyPolicy>;
  /** Given the fixture's temporary directory (a state directory for tokens). */
  approver?: (dir: string) => Approver;
  limits?: LimitsTable;
}

const CASES: Case[] = [
  {
    name: "a write above the maximum",
    plan: () => plan(write(H01, 2.5)),
    status: "preflight_failed",
    message:
      /actions\[0\]: value 2\.5 mrad is above the maximum 2 mrad \(safety_limits\.toml: LINAC:COR:\*:SETPT\)/,
  },
  {
    name: "a write below the minimum",
    plan: () => plan(write(H01, -2.5)),
    status: "preflight_failed",
    message: /value -2\.5 mrad is below the minimum -2 mrad/,
  },
  {
    name: "an interior scan point out of range",
    plan: (l) => plan(scan(l.h01, l.h01 + 2.5, 6)),
    status: "preflight_failed",
    message: /scan point 6 of 6: value 2\.346 mrad is above the maximum 2 mrad/,
  },
  {
    name: "a rollback value out of range",
    plan: (l) => ({ ...plan(write(H01, l.h01 + 0.1)), rollback: [write(H01, 3)] }),
    status: "preflight_failed",
    message: /rollback\[0\]: value 3 mrad is above the maximum/,
  },
  {
    name: "a device with no limits defined",
    plan: () => plan(write("ID:01:GAP:SETPT", 36)),
    status: "preflight_failed",
    message:
      /ID:01:GAP:SETPT has no entry in safety_limits\.toml; a device without limits cannot be written/,
  },
  {
    name: "a read-only device",
    plan: () => plan(write("LINAC:BPM:01:X", 0)),
    status: "preflight_failed",
    message: /LINAC:BPM:01:X is read-only/,
  },
  {
    name: "an unknown device",
    plan: () => plan(write("LINAC:COR:H99:SETPT", 0)),
    status: "preflight_failed",
    message: /LINAC:COR:H99:SETPT does not exist/,
  },
  {
    name: "a device name in the wrong case",
    plan: () => plan(write("linac:cor:h01:setpt", 0)),
    status: "preflight_failed",
    message: /linac:cor:h01:setpt does not exist/,
  },
  {
    name: "an unknown device among the reads",
    plan: (l) => plan(read(["NOPE:X"]), write(H01, l.h01)),
    status: "preflight_failed",
    message: /actions\[0\]: NOPE:X does not exist/,
  },
  {
    name: "NaN",
    plan: () => plan(write(H01, NaN)),
    status: "invalid",
    message: /actions\[0\]\.value: NaN is not a finite number/,
  },
  {
    name: "Infinity",
    plan: () => plan(write(H01, Infinity)),
    status: "invalid",
    message: /actions\[0\]\.value: Infinity is not a finite number/,
  },
  {
    name: "-Infinity in a scan",
    plan: () => plan(scan(0, -Infinity, 3)),
    status: "invalid",
    message: /actions\[0\]\.stop: -Infinity is not a finite number/,
  },
  {
    name: 'the string "NaN" for a number',
    plan: () => plan(write(H01, "NaN")),
    status: "preflight_failed",
    message: /value "NaN" is a string; LINAC:COR:H01:SETPT takes a number/,
  },
  {
    name: "a numeric string for a number",
    plan: () => plan(write(H01, "0.1")),
    status: "preflight_failed",
    message: /value "0\.1" is a string/,
  },
  {
    name: "a number for an enum",
    plan: () => plan(write("TIMING:INJ:ENABLE", 1)),
    status: "preflight_failed",
    message: /value 1 is a number; TIMING:INJ:ENABLE takes one of its labels/,
  },
  {
    name: "an enum value not allowed",
    plan: () => plan(write("TIMING:INJ:ENABLE", "MAYBE")),
    status: "preflight_failed",
    message: /value "MAYBE" is not one of ENABLED, DISABLED/,
  },
  {
    name: "too large a step from the live value",
    plan: (l) => plan(write(H01, l.h01 + 0.8)),
    status: "preflight_failed",
    message: /step of 0\.8 mrad from -0\.154 mrad exceeds max_step 0\.5 mrad/,
  },
  {
    name: "steps that add up past max_step in the second write",
    plan: (l) => plan(write(H01, l.h01 + 0.4), wait(), write(H01, l.h01 + 1.0)),
    status: "preflight_failed",
    message: /actions\[2\]: step of 0\.6 mrad/,
  },
  {
    name: "too large a step between scan points",
    plan: (l) => plan(scan(l.h01, l.h01 + 1.5, 2)),
    status: "preflight_failed",
    message: /scan point 2 of 2: step of 1\.5 mrad/,
  },
  {
    name: "a scan starting too far from the live value",
    plan: (l) => plan(scan(l.h01 + 1, l.h01 + 1.2, 3)),
    status: "preflight_failed",
    message: /scan point 1 of 3: step of 1 mrad/,
  },
  {
    name: "a rollback that jumps back too far",
    plan: (l) => ({
      ...plan(write(H01, l.h01 + 0.5), wait(), write(H01, l.h01 + 1.0)),
      rollback: [write(H01, l.h01)],
    }),
    status: "preflight_failed",
    message: /rollback\[0\]: step of -1 mrad/,
  },
  {
    name: "the kill switch on",
    plan: (l) => plan(write(H01, l.h01 + 0.1)),
    policy: { writesEnabled: false },
    status: "preflight_failed",
    message: /writes are disabled by the kill switch \(\[safety\] writes_enabled = false\)/,
  },
  {
    name: "the kill switch on, for a scan",
    plan: (l) => plan(scan(l.h01, l.h01 + 0.2, 3)),
    policy: { writesEnabled: false },
    status: "preflight_failed",
    message: /scan point 1 of 3: writes are disabled/,
  },
  {
    name: "a duplicate write",
    plan: (l) => plan(write(H01, l.h01 + 0.1), write(H01, l.h01 + 0.1)),
    status: "preflight_failed",
    message:
      /actions\[1\]: LINAC:COR:H01:SETPT is written again right after actions\[0\] with nothing between/,
  },
  {
    name: "conflicting writes",
    plan: (l) => plan(write(H01, l.h01 + 0.1), write(H01, l.h01 - 0.1)),
    status: "preflight_failed",
    message: /written again right after actions\[0\]/,
  },
  {
    name: "too many scan points",
    plan: (l) => plan(scan(l.h01, l.h01 + 0.3, 150)),
    status: "preflight_failed",
    message: /the plan has 150 scan points; at most 100 are allowed \(\[safety\] max_scan_points\)/,
  },
  {
    name: "too long a plan",
    plan: () => plan(read(), wait(10_000)),
    status: "preflight_failed",
    message: /the plan would take about 10000 s; at most 600 s are allowed/,
  },
  {
    name: "a device the limits file marks not writable",
    plan: () => plan(write("RING:DIPOLE:CURRENT", 500)),
    status: "preflight_failed",
    message:
      /RING:DIPOLE:CURRENT is marked not writable in safety_limits\.toml \(RING:DIPOLE:CURRENT\)/,
  },
  {
    name: "a wildcard that marks devices not writable",
    plan: () => plan(write("RF:STN:03:VOLT:SETPT", 500)),
    status: "preflight_failed",
    message: /marked not writable in safety_limits\.toml \(RF:STN:\*:VOLT:SETPT\)/,
  },
  {
    name: "a scan of a read-only device",
    plan: () => plan({ ...scan(0, 0.1, 2), writeDevice: "LINAC:BPM:01:X" }),
    status: "preflight_failed",
    message: /scan point 1 of 2: LINAC:BPM:01:X is read-only/,
  },
  {
    name: "a scan reading an unknown device",
    plan: (l) => plan(scan(l.h01, l.h01 + 0.1, 2, { readDevices: ["RING:BPM:99:X"] })),
    status: "preflight_failed",
    message: /RING:BPM:99:X does not exist/,
  },
  {
    name: "a rollback writing a read-only device",
    plan: (l) => ({ ...plan(write(H01, l.h01 + 0.1)), rollback: [write("DIAG:ENERGY:MEAS", 150)] }),
    status: "preflight_failed",
    message: /rollback\[0\]: DIAG:ENERGY:MEAS is read-only/,
  },
  {
    name: "a value within the safety limits but outside the device's own",
    plan: () => plan(write(H01, 6)),
    limits: new LimitsTable({ "LINAC:COR:*:SETPT": { min: -10, max: 10, max_step: 10 } }),
    status: "preflight_failed",
    message: /value 6 mrad is above the maximum 5 mrad \(the device's own limit\)/,
  },
  {
    name: "the nested action shape, out of range",
    plan: () => plan({ type: "write", params: { device: H01, value: 9, reason: "nested" } }),
    status: "preflight_failed",
    message: /value 9 mrad is above the maximum 2 mrad/,
  },
  {
    name: "snake_case scan fields, out of range",
    plan: (l) =>
      plan({
        type: "scan",
        params: {
          write_device: H01,
          start: l.h01,
          stop: l.h01 + 2.5,
          steps: 6,
          read_devices: BPMS,
          dwell_seconds: 0,
        },
      }),
    status: "preflight_failed",
    message: /scan point 6 of 6/,
  },
  {
    name: "an unknown action type",
    plan: () => plan({ type: "set", device: H01, value: 0 }),
    status: "invalid",
    message: /actions\[0\]\.type: unknown action type "set"/,
  },
  {
    name: "a write without a reason",
    plan: () => plan({ type: "write", device: H01, value: 0 }),
    status: "invalid",
    message: /actions\[0\]\.reason/,
  },
  {
    name: "an unknown field such as force",
    plan: () => plan({ ...write(H01, 0), force: true }),
    status: "invalid",
    message: /actions\[0\]: unknown field force/,
  },
  {
    name: "a negative dwell and a one-point scan",
    plan: () => plan(scan(0, 0.1, 1, { dwellSeconds: -1 })),
    status: "invalid",
    message: /actions\[0\]\.steps: .*>=2/,
  },
  { name: "an empty plan", plan: () => plan(), status: "invalid", message: /actions: Too small/ },
  {
    name: "a plan altered after approval",
    plan: (l) => plan(write(H01, l.h01 + 0.1)),
    approver: () =>
      new SwapAfterApproval((p) => ({
        ...p,
        actions: [{ type: "write", device: H01, value: 1.9, reason: "swapped" }],
      })),
    status: "refused",
    message: /is not the approved/,
  },
  {
    name: "a plan approved by a bare hash instead of a token",
    plan: (l) => plan(write(H01, l.h01 + 0.1)),
    approver: (dir) => new TokenApprover("f".repeat(64), new ApprovalTokens(dir, SCOPE)),
    status: "rejected",
    message: /approval refused: a plan hash is not an approval/,
  },
  {
    name: "a plan approved by a token shaped right but signed with no key",
    plan: (l) => plan(write(H01, l.h01 + 0.1)),
    approver: (dir) =>
      new TokenApprover(
        `apv2.${"0".repeat(16)}.${"0".repeat(16)}.9999999999.AAAAAAAAAAAAAAAA.${"A".repeat(43)}`,
        new ApprovalTokens(dir, SCOPE),
      ),
    status: "rejected",
    message: /approval refused: the token approves plan 0000000000000000…, not this plan/,
  },
  {
    name: "a plan with no terminal to approve it",
    plan: (l) => plan(write(H01, l.h01 + 0.1)),
    approver: () => new DeferringApprover(),
    status: "deferred",
    message:
      /No operator terminal is available, so nothing was written\. The plan is saved as plan-[0-9a-f]{12}; the operator reviews it with: accel-agent plan show plan-[0-9a-f]{12}\./,
  },
  {
    name: "a plan from an agent that may not write",
    plan: (l) => plan(write(H01, l.h01 + 0.1)),
    approver: () => new RefusingApprover("sub-agents cannot change the machine"),
    status: "rejected",
    message: /sub-agents cannot change the machine/,
  },
];

for (const c of CASES) {
  Deno.test(`adversarial plan refused: ${c.name}`, async () => {
    await using f = await fixture({ policy: c.policy, limits: c.limits });
    const before = await f.sim.read([H01, "TIMING:INJ:ENABLE"]);
    const live = { h01: before[0]?.value as number };
    const approver = c.approver?.(f.dir) ?? new ApproveAll();
    const outcome = await f.service.propose(c.plan(live), approver, new AbortController().signal);
    assert.equal(outcome.status, c.status, JSON.stringify(outcome));
    const text = JSON.stringify(forModel(outcome)).replaceAll('\\"', '"');
    assert.match(text, c.message);
    // Whatever the outcome, the model is never handed an approval token.
    assert.doesNotMatch(text, /apv\d\./);
    assert.equal(f.cs.attempts, 0, "no write reached the adapter");
    assert.deepEqual(
      (await f.sim.read([H01, "TIMING:INJ:ENABLE"])).map((r) => r.value),
      before.map((r) => r.value),
    );
  });
}

Deno.test("the adversarial suite has at least 40 plans", () => {
  assert.ok(CASES.length >= 40, `${CASES.length}`);
});

Deno.test("adversarial plan refused: ten billion scan steps are refused without expanding them", async () => {
  await using f = await fixture();
  const outcome = await f.service.propose(
    { description: "huge", actions: [scan(0, 0.1, 10_000_000_000)] },
    new ApproveAll(),
    new AbortController().signal,
  );
  assert.equal(outcome.status, "invalid");
  assert.match(JSON.stringify(outcome), /actions\[0\]\.steps: Too big/);
  assert.equal(f.cs.attempts, 0);
});

Deno.test("adversarial plan refused: a plan the model sends as strings goes through the registry's coercion and still fails preflight", async () => {
  await using f = await fixture();
  const { createRegistry } = await import("../../src/tools/mod.ts");
  const tools = createRegistry({
    cs: f.cs,
    now: () => f.clock.now(),
    plans: { service: f.service, approver: new ApproveAll() },
  }, {
    maxOutputChars: 20_000,
    timeoutMs: 5_000,
  });
  const out = await tools.execute(
    "propose_plan",
    JSON.stringify({
      description: "x",
      actions: [{
        type: "scan",
        params: {
          write_device: H01,
          start: "0",
          stop: "9",
          steps: "4",
          read_devices: "LINAC:BPM:01:X",
          dwell_seconds: "0",
        },
      }],
    }),
    new AbortController().signal,
  );
  assert.match(out.content, /"status":"preflight_failed"/);
  assert.match(out.content, /above the maximum 2 mrad/);
  assert.equal(f.cs.attempts, 0);
});
