/**
 * Writes on a real TangoTest (sys/tg_test/1) are confirmed by the
 * attribute's read value, compared with the value set: string_scalar reads
 * back what was written, double_scalar reads value × sin(k°) and so never
 * confirms, a WRITE attribute alone has no readback device, and a WRITE
 * attribute read by a READ_WITH_WRITE one is confirmed by that one.
 */
import assert from "node:assert/strict";
import { basicAuth } from "../../../src/adapters/http.ts";
import { createTango } from "../../../src/adapters/tango/mod.ts";
import { executePlan } from "../../../src/plan/executor.ts";
import { type Plan, planHash } from "../../../src/plan_model/plan.ts";
import { LimitsTable } from "../../../src/safety/limits.ts";
import { HAS_TANGO, startTango } from "../../support/facility/tango_server.ts";

const ignore = !HAS_TANGO && !Deno.env.get("CI");
const D = "sys/tg_test/1";

Deno.test({
  name:
    "TangoTest: a write is confirmed by the attribute's read value, or said to have no readback device",
  ignore,
  async fn() {
    await using server = await startTango();
    const cs = createTango({
      restUrl: server.restUrl,
      tangoHost: server.tangoHost,
      authorization: basicAuth((n) => server.env[n], "TANGO_REST_USER", "TANGO_REST_PASSWORD"),
    });
    const limits = new LimitsTable({
      [`${D}/string_scalar`]: { unbounded: true },
      [`${D}/ampli`]: { min: 0, max: 10, max_step: 10, tolerance: 1e-9 },
      [`${D}/double_scalar`]: { min: -10, max: 10, max_step: 20, tolerance: 1e-6, settle_s: 0.5 },
    }, { caseSensitive: false });
    const run = async (plan: Plan) =>
      await executePlan(plan, await planHash(plan), {
        cs,
        limits,
        policy: { writesEnabled: true, maxScanPoints: 10, maxPlanSeconds: 60, limitsSource: "l" },
        signal: new AbortController().signal,
        now: Date.now,
      });
    const write = (attr: string, value: number | string) => ({
      description: `set ${attr}`,
      actions: [{ type: "write" as const, device: `${D}/${attr}`, value, reason: "test" }],
    });
    try {
      const [rw, w, wr] = await cs.describe([
        `${D}/String_Scalar`,
        `${D}/ampli`,
        `${D}/double_scalar_w`,
      ]);
      assert.equal(rw?.readback, `${D}/String_Scalar`, "a READ_WRITE attribute reads itself back");
      assert.equal(w?.readback, undefined, "a WRITE attribute alone has none");
      assert.equal(wr?.readback, `${D}/double_scalar_rww`, "its READ_WITH_WRITE reader");

      const s = await run(write("string_scalar", "ramp to 3 GeV"));
      assert.equal(s.status, "completed", s.errors.join("; "));
      assert.deepEqual(s.results[0]?.confirmation, {
        status: "confirmed",
        readbackDevice: `${D}/string_scalar`,
        readValue: true,
        readback: "ramp to 3 GeV",
      });
      assert.match(
        s.results[0]?.detail ?? "",
        /confirmed by sys\/tg_test\/1\/string_scalar's read value/,
      );

      const a = await run(write("ampli", 2.5));
      assert.equal(a.status, "completed", a.errors.join("; "));
      assert.equal(a.results[0]?.confirmation?.status, "accepted");
      assert.match(a.results[0]?.detail ?? "", /setpoint accepted, no readback device/);

      const d = await run(write("double_scalar", 4));
      assert.equal(d.status, "failed");
      assert.match(
        d.errors[0] ?? "",
        /^readback sys\/tg_test\/1\/double_scalar \(its read value\) of sys\/tg_test\/1\/double_scalar reads .*, not 4 within ±0\.000001 after 0\.5 s: the write is not confirmed$/,
      );
    } finally {
      await cs.close();
    }
  },
});
