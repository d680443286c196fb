import assert from "node:assert/strict";
import type { LogEntry } from "../../../src/adapters/adapter.ts";
import { DEFAULT_LOG_LIMIT, MAX_SCAN_SHIFTS } from "../../../src/adapters/simulator/mod.ts";
import { DAY, HOUR, iso, simAt, T0 } from "./helpers.ts";

const twoDays = { from: iso(T0 - 2 * DAY), to: iso(T0) };

function assertNewestFirstWithin(entries: LogEntry[], from: number, to: number): void {
  for (let i = 0; i < entries.length; i++) {
    const t = Date.parse(entries[i]?.time ?? "");
    assert.ok(t >= from && t < to, `${entries[i]?.time} inside the range`);
    if (i > 0) assert.ok(t <= Date.parse(entries[i - 1]?.time ?? ""), "newest first");
  }
}

Deno.test("logs are deterministic for a seed and differ for another seed", async () => {
  for (const source of ["elog", "alarm"] as const) {
    const a = await simAt(T0, 1).sim.logs({ source, ...twoDays });
    const b = await simAt(T0, 1).sim.logs({ source, ...twoDays });
    const c = await simAt(T0, 7).sim.logs({ source, ...twoDays });
    assert.ok(a.length > 0, `${source} has entries`);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  }
});

Deno.test("e-log entries look like a control-room logbook", async () => {
  const { sim } = simAt();
  const entries = await sim.logs({ source: "elog", ...twoDays });
  assertNewestFirstWithin(entries, T0 - 2 * DAY, T0);
  const titles = entries.map((e) => e.title);
  assert.equal(titles.filter((t) => / shift start$/.test(t)).length, 6, "three shifts a day");
  assert.equal(titles.filter((t) => / shift summary$/.test(t)).length, 6);
  for (const e of entries) {
    assert.equal(e.source, "elog");
    assert.ok(e.author && e.logbook, "author and logbook");
    assert.ok(["Info", "Warning", "Problem"].includes(e.status ?? ""));
  }
  assert.equal(new Set(entries.map((e) => e.id)).size, entries.length, "ids are unique");
});

Deno.test("log devices exist in the namespace", async () => {
  const { sim } = simAt();
  const week = { from: iso(T0 - 7 * DAY), to: iso(T0), limit: 2000 };
  const entries = [
    ...await sim.logs({ source: "elog", ...week }),
    ...await sim.logs({ source: "alarm", ...week }),
  ];
  const devices = [...new Set(entries.flatMap((e) => e.devices))];
  assert.ok(devices.length > 10);
  const infos = await sim.describe(devices);
  assert.deepEqual(infos.filter((i) => !i.exists).map((i) => i.device), []);
});

Deno.test("log filters select by device wildcard, text and severity", async () => {
  const { sim } = simAt();
  const week = { from: iso(T0 - 7 * DAY), to: iso(T0), limit: 1000 };
  const rf3 = await sim.logs({ source: "elog", ...week, device: "RF:STN:03:*" });
  assert.ok(rf3.length > 0);
  assert.ok(rf3.every((e) => e.devices.some((d) => d.startsWith("RF:STN:03:"))));
  const exact = await sim.logs({ source: "alarm", ...week, device: "RING:DCCT:CURRENT" });
  assert.ok(exact.length > 0 && exact.every((e) => e.devices.includes("RING:DCCT:CURRENT")));
  const text = await sim.logs({ source: "elog", ...week, text: "PRESSURE BURST" });
  assert.ok(text.length > 0);
  assert.ok(text.every((e) => `${e.title} ${e.text}`.toLowerCase().includes("pressure burst")));
  const all = await sim.logs({ source: "alarm", ...week });
  const major = await sim.logs({ source: "alarm", ...week, minSeverity: "MAJOR" });
  assert.ok(major.length > 0 && major.length < all.length);
  assert.ok(major.every((e) => e.severity === "MAJOR" || e.severity === "INVALID"));
  assert.ok(
    all.some((e) => e.severity === "NONE" && e.status === "NO_ALARM"),
    "returns to normal are logged",
  );
});

Deno.test("logs respect the limit, default to 100 and return nothing for an empty range", async () => {
  const { sim } = simAt();
  const month = { from: iso(T0 - 30 * DAY), to: iso(T0) };
  assert.equal((await sim.logs({ source: "elog", ...month })).length, DEFAULT_LOG_LIMIT);
  assert.equal((await sim.logs({ source: "alarm", ...month, limit: 7 })).length, 7);
  assert.deepEqual(await sim.logs({ source: "elog", from: iso(T0), to: iso(T0) }), []);
  assert.deepEqual(await sim.logs({ source: "elog", from: iso(T0), to: iso(T0 - DAY) }), []);
  await assert.rejects(sim.logs({ source: "elog", from: "yesterday", to: iso(T0) }), RangeError);
});

Deno.test("any time range up to now works, and a ten-year scan stays bounded", async () => {
  const { sim } = simAt();
  // A day years from the clock has no log yet; with the clock past it, it has.
  const day = { source: "elog" as const, from: "2031-06-01T00:00:00Z", to: "2031-06-02T00:00:00Z" };
  assert.deepEqual(await sim.logs(day), []);
  const later = simAt(Date.parse("2031-06-03T00:00:00Z")).sim;
  assert.ok((await later.logs(day)).length >= 6);
  const tenYears = { from: iso(T0 - 3653 * DAY), to: iso(T0) };
  const nothing = await sim.logs({ source: "alarm", ...tenYears, text: "no such words anywhere" });
  assert.deepEqual(nothing, []);
  const trips = await sim.logs({
    source: "elog",
    ...tenYears,
    text: "RF station 3 tripped",
    limit: 10_000,
  });
  const oldest = Date.parse(trips.at(-1)?.time ?? "");
  assert.ok(trips.length > 100);
  assert.ok(oldest >= T0 - (MAX_SCAN_SHIFTS + 1) * 8 * HOUR, "scan capped to the newest shifts");
});

Deno.test("RF station 3 trips on reflected power on most nights", async () => {
  const { sim } = simAt();
  const trips = await sim.logs({
    source: "elog",
    from: iso(T0 - 30 * DAY),
    to: iso(T0),
    text: "RF station 3 tripped on reflected power",
    limit: 1000,
  });
  // A night runs from the swing shift (16:00 UTC) to the end of the owl shift (08:00 UTC),
  // and is named after the morning it ends on.
  const nights = new Set(
    trips
      .map((e) => Date.parse(e.time))
      .filter((t) => new Date(t).getUTCHours() < 8 || new Date(t).getUTCHours() >= 16)
      .map((t) => new Date(t + 8 * HOUR).toISOString().slice(0, 10)),
  );
  assert.ok(nights.size >= 15, `${nights.size} nights of 30 had a trip`);
});

Deno.test("an RF station 3 trip agrees across e-log, alarm log, live reads and archive", async () => {
  const { sim, clock } = simAt();
  const week = { from: iso(T0 - 7 * DAY), to: iso(T0) };
  const interlocks = await sim.logs({
    source: "alarm",
    ...week,
    device: "RF:STN:03:INTLK",
    minSeverity: "MAJOR",
  });
  const trip = interlocks.find((e) => e.text.endsWith("REFL_PWR"));
  assert.ok(trip, "a REFL_PWR trip in the alarm log");
  const t = Date.parse(trip.time);
  const around = { from: iso(t - HOUR), to: iso(t + HOUR) };

  const elog = await sim.logs({ source: "elog", ...around, device: "RF:STN:03:INTLK" });
  const report = elog.find((e) => e.title.includes("tripped on reflected power"));
  assert.ok(report, "the operators logged it");
  assert.ok(report.text.includes(`tripped at ${trip.time.slice(11, 19)} UTC`), report.text);
  assert.ok(Date.parse(report.time) > t, "written after the trip");
  assert.ok(
    elog.some((e) => e.logbook === "RF" && e.title.startsWith("RF3 reset")),
    "RF expert reset it",
  );

  const alarms = await sim.logs({ source: "alarm", ...around });
  const at = (title: string) =>
    alarms.find((e) => e.title === title && Math.abs(Date.parse(e.time) - t) < 15 * 60_000);
  const hihi = at("RF:STN:03:REFL:PWR HIHI");
  assert.ok(hihi && Date.parse(hihi.time) < t, "reflected power went HIHI before the trip");
  assert.ok(at("RF:STN:03:STATUS STATE"));
  const beamLost = at("RING:DCCT:CURRENT LOLO");
  assert.ok(beamLost && Date.parse(beamLost.time) >= t, "beam lost at the trip");

  const [volts, fwd, status] = await sim.archive({
    devices: ["RF:STN:03:CAV:VOLT", "RF:STN:03:FWD:PWR", "RF:STN:03:STATUS"],
    from: iso(t - 5000),
    to: iso(t + 5000),
  });
  const before = (s: typeof volts) =>
    s?.samples.filter((p) => Date.parse(p.time) < t).map((p) => p.value);
  const after = (s: typeof volts) =>
    s?.samples.filter((p) => Date.parse(p.time) > t).map((p) => p.value);
  assert.ok(before(volts)?.every((v) => typeof v === "number" && v > 550));
  assert.ok(after(volts)?.every((v) => typeof v === "number" && v < 10));
  assert.ok(before(fwd)?.every((v) => typeof v === "number" && v > 100));
  assert.ok(after(fwd)?.every((v) => typeof v === "number" && v < 10));
  assert.ok(after(status)?.every((v) => v === "TRIPPED"));

  clock.set(t + 60_000);
  const live = await sim.read(["RF:STN:03:STATUS", "RF:STN:03:INTLK", "RING:DCCT:CURRENT"]);
  assert.deepEqual(live.map((r) => [r.value, r.severity]), [
    ["TRIPPED", "MAJOR"],
    ["REFL_PWR", "MAJOR"],
    [0, "MAJOR"],
  ]);
});

Deno.test("callers may edit returned log entries without changing later answers", async () => {
  const { sim } = simAt();
  const first = await sim.logs({ source: "elog", ...twoDays, limit: 3 });
  const copy = structuredClone(first);
  for (const e of first) {
    e.text = "";
    e.devices.push("EDITED");
  }
  assert.deepEqual(await sim.logs({ source: "elog", ...twoDays, limit: 3 }), copy);
});
