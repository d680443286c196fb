/**
 * Tool results are typed at the seam: a tool declares its result beside its
 * schema, and `deno check` fails when `execute` returns another shape. The
 * `@ts-expect-error` lines below make this file fail to type-check the day
 * such an error is no longer reported.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { ManualClock } from "../../src/adapters/clock.ts";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { defineTool, EVERY_TOOL, ToolRegistry } from "../../src/tools/mod.ts";
import type { GetParameterResult } from "../../src/tools/get_parameter.ts";
import { cutResult, resultOf, type ToolName, type ToolResults } from "../../src/tools/results.ts";

const clock = new ManualClock(Date.parse("2026-11-20T12:00:00Z"));
const deps = { cs: createSimulator({ seed: 1, clock }), now: () => clock.now() };
const never = new AbortController().signal;

const Devices = z.strictObject({ devices: z.array(z.string()).describe("device names") });

/** Declares the real `get_parameter` result and returns it. */
const rightShape = defineTool<typeof Devices, GetParameterResult>({
  name: "get_parameter",
  description: "Reads devices (a stand-in returning fixed values)",
  parameters: Devices,
  readOnly: true,
  execute: ({ devices }) =>
    Promise.resolve({
      readings: devices.map((device) => ({
        device,
        value: 1.5,
        units: "mm",
        time: "2026-11-20T12:00:00Z",
        severity: "NONE" as const,
        status: "NO_ALARM",
      })),
    }),
});

/** Declares the same result and returns readings missing their units, time and severity. */
const wrongShape = defineTool<typeof Devices, GetParameterResult>({
  name: "get_parameter",
  description: "Reads devices (returns the wrong shape)",
  parameters: Devices,
  readOnly: true,
  // @ts-expect-error -- a reading without units, time, severity and status is not a GetParameterResult
  execute: ({ devices }) => Promise.resolve({ readings: devices.map((device) => ({ device })) }),
});

/** Declares no result type: then nothing it returns type-checks. */
const undeclared = defineTool({
  name: "echo",
  description: "Returns its arguments",
  parameters: Devices,
  readOnly: true,
  // @ts-expect-error -- a tool must declare what it returns
  execute: (args) => Promise.resolve(args),
});

Deno.test("a tool that declares no result or returns the wrong shape still runs; only the type check stops it", async () => {
  // The registry does not re-check results at run time: the compiler is the guard, so
  // these wrong definitions reach the model unchanged when the check is skipped.
  const r = new ToolRegistry([wrongShape, undeclared], deps, {
    maxOutputChars: 1_000,
    timeoutMs: 5_000,
  });
  const wrong = await r.execute("get_parameter", '{"devices":["A"]}', never);
  assert.deepEqual(wrong.result, { readings: [{ device: "A" }] });
  const echo = await r.execute("echo", '{"devices":["B"]}', never);
  assert.deepEqual(echo.result, { devices: ["B"] });
});

Deno.test("a consumer reads a tool's result typed by the tool's name, and nothing else as it", async () => {
  const r = new ToolRegistry([rightShape], deps, { maxOutputChars: 1_000, timeoutMs: 5_000 });
  const out = await r.execute("get_parameter", '{"devices":["LINAC:BPM:01:X"]}', never);
  const call = { name: "get_parameter", ...out };
  const readings = resultOf("get_parameter", call)?.readings;
  assert.equal(readings?.[0]?.units, "mm");
  // @ts-expect-error -- get_parameter's result has no `devices`; only search_device's has
  resultOf("get_parameter", call)?.devices;
  assert.equal(resultOf("search_device", call), undefined);
  assert.equal(resultOf("get_parameter", { ...call, ok: false }), undefined);
});

Deno.test("a result the model read cut is the stand-in, never taken for the tool's whole result", async () => {
  const r = new ToolRegistry([rightShape], deps, { maxOutputChars: 200, timeoutMs: 5_000 });
  const many = Array.from({ length: 20 }, (_, i) => `LINAC:BPM:${i}:X`);
  const out = await r.execute("get_parameter", JSON.stringify({ devices: many }), never);
  const call = { name: "get_parameter", ...out };
  assert.equal(resultOf("get_parameter", call), undefined);
  assert.equal(cutResult(call)?.truncated.full_output, null);
  assert.equal(cutResult({ name: "x", ok: true, result: { truncated: true } }), undefined);
});

/** One entry per tool with a declared result; the compiler requires every name. */
const DECLARED: Record<ToolName, true> = {
  get_parameter: true,
  search_device: true,
  read_log: true,
  propose_plan: true,
  predict_effect: true,
  execute_code: true,
  run_script: true,
  list_scripts: true,
  ask_user: true,
  spawn_subagent: true,
  agent_status: true,
  agent_list: true,
  agent_cancel: true,
  return: true,
  fail: true,
  launch_display: true,
  plot: true,
};

Deno.test("every tool the model is offered has its result declared by name", () => {
  const missing = EVERY_TOOL.map((t) => t.name).filter((n) => !(n in DECLARED));
  assert.deepEqual(missing, []);
  // A name's type is the tool's own: propose_plan's statuses are the ones it returns.
  const status: ToolResults["propose_plan"]["status"] = "approval_required";
  // @ts-expect-error -- "approved" is a decision, not a status propose_plan returns
  const wrong: ToolResults["propose_plan"]["status"] = "approved";
  assert.notEqual(status, wrong);
});
