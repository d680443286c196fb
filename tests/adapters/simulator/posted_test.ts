/**
 * Entries posted to the simulator's logbook are part of its e-log, under
 * the same filters as the generated history: time range, device, text,
 * severity, limit; the alarm log is untouched.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../../src/adapters/clock.ts";
import { FileLogbook } from "../../../src/adapters/file_logbook.ts";
import { createSimulator } from "../../../src/adapters/simulator/mod.ts";
import { tempDir } from "../../support/temp.ts";

const T0 = Date.parse("2026-11-20T12:00:00Z");

Deno.test("the simulator's e-log shows posted entries newest first, filtered like its own", async () => {
  await using tmp = await tempDir();
  const clock = new ManualClock(T0);
  const book = new FileLogbook(`${tmp.path}/simulator.jsonl`, "simulator", () => clock.now());
  const sim = createSimulator({ seed: 1, clock, posted: book });
  const post = (title: string, level: string, devices: string[]) =>
    book.post({
      draftId: crypto.randomUUID(),
      title,
      body: `body of ${title}`,
      level,
      logbooks: ["Operations"],
      tags: [],
      devices,
      author: "tester",
      attachments: [],
    });
  await post("Plan completed: trim H01", "Info", ["LINAC:COR:H01:SETPT"]);
  clock.advance(60_000);
  await post("Plan failed: phase", "Problem", ["RF:PHASE:SETPT"]);
  const range = {
    from: new Date(T0 - 3_600_000).toISOString(),
    to: new Date(T0 + 3_600_000).toISOString(),
  };
  const all = await sim.logs({ source: "elog", ...range, limit: 200 });
  const mine = all.filter((e) => e.id.startsWith("sim-"));
  assert.deepEqual(mine.map((e) => e.title), ["Plan failed: phase", "Plan completed: trim H01"]);
  assert.ok(all.indexOf(mine[0]!) < all.indexOf(mine[1]!));
  assert.deepEqual(mine.map((e) => [e.severity, e.status, e.author, e.logbook]), [
    ["MINOR", "Problem", "tester", "Operations"],
    ["NONE", "Info", "tester", "Operations"],
  ]);
  const byDevice = await sim.logs({ source: "elog", ...range, device: "LINAC:COR:H01:*" });
  assert.ok(byDevice.some((e) => e.title === "Plan completed: trim H01"));
  assert.ok(!byDevice.some((e) => e.title === "Plan failed: phase"));
  const byText = await sim.logs({ source: "elog", ...range, text: "BODY OF PLAN FAILED" });
  assert.deepEqual(byText.map((e) => e.title), ["Plan failed: phase"]);
  const minor = await sim.logs({ source: "elog", ...range, minSeverity: "MINOR", limit: 500 });
  assert.ok(minor.some((e) => e.title === "Plan failed: phase"));
  assert.ok(!minor.some((e) => e.title === "Plan completed: trim H01"));
  const before = await sim.logs({
    source: "elog",
    from: range.from,
    to: new Date(T0).toISOString(),
  });
  assert.ok(!before.some((e) => e.id.startsWith("sim-")));
  const one = await sim.logs({ source: "elog", ...range, limit: 1 });
  assert.equal(one.length, 1);
  const alarms = await sim.logs({ source: "alarm", ...range, limit: 500 });
  assert.ok(!alarms.some((e) => e.id.startsWith("sim-")));
});
