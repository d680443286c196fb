/** search_device names, for a writable device, the readback device that confirms its writes. */
import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { ToolRegistry } from "../../src/tools/mod.ts";
import { searchDevice } from "../../src/tools/search_device.ts";

Deno.test("search_device gives a writable device's readback device, and none for a read-only one or one without", async () => {
  const clock = new ManualClock(Date.parse("2026-11-20T12:00:00Z"));
  const r = new ToolRegistry([searchDevice], {
    cs: createSimulator({ seed: 1, clock }),
    now: () => clock.now(),
  }, {
    maxOutputChars: 100_000,
    timeoutMs: 5_000,
  });
  const run = async (pattern: string) => {
    const out = await r.execute(
      "search_device",
      JSON.stringify({ pattern, limit: 50 }),
      new AbortController().signal,
    );
    assert.equal(out.ok, true, JSON.stringify(out));
    return (out.result as { devices: { name: string; writable: boolean; readback?: string }[] })
      .devices;
  };
  const quads = await run("LINAC:QUAD:01:*");
  assert.deepEqual(quads.map((d) => [d.name, d.readback]), [
    ["LINAC:QUAD:01:CURRENT", "LINAC:QUAD:01:RDBK"],
    ["LINAC:QUAD:01:PS:TEMP", undefined],
    ["LINAC:QUAD:01:RDBK", undefined],
    ["LINAC:QUAD:01:STATUS", undefined],
  ]);
  assert.deepEqual((await run("TIMING:INJ:ENABLE")).map((d) => [d.writable, d.readback]), [[
    true,
    undefined,
  ]]);
});
