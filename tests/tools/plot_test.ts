/**
 * The `plot` tool over a fake control system: each source gives the chart's
 * data, an SVG and a data file in the work directory's `plots/`, and a
 * summary whose numbers are the data's.
 */
import assert from "node:assert/strict";
import type { ArchiveQuery, ControlReader, Reading } from "../../src/adapters/adapter.ts";
import { ManualClock } from "../../src/adapters/clock.ts";
import { plotTool } from "../../src/tools/plot.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { ClockTimers } from "../support/clock_timers.ts";
import { tempDir } from "../support/temp.ts";

const NOW = Date.parse("2026-11-20T12:00:00Z");

/** A control system with one archived device (a dip at 10:30) and live reads that count up. */
function fakeCs(clock: ManualClock) {
  let reads = 0;
  const cs = {
    kind: "fake",
    archive: (q: ArchiveQuery) =>
      Promise.resolve(q.devices.map((device) =>
        device === "RING:DCCT:CURRENT"
          ? {
            device,
            units: "mA",
            ok: true,
            samples: Array.from({ length: 121 }, (_, i) => ({
              time: new Date(Date.parse(q.from) + i * 60_000).toISOString(),
              value: i === 30 ? 250 : 300 + (i % 2),
              severity: "NONE",
            })),
          }
          : { device, units: "", ok: false, samples: [], error: `Unknown device "${device}"` }
      )),
    read: (names: string[]): Promise<Reading[]> => {
      reads++;
      return Promise.resolve(names.map((device) => ({
        device,
        value: reads,
        units: "%",
        timestamp: new Date(clock.now()).toISOString(),
        severity: "NONE",
        status: "NO_ALARM",
        ok: true,
      })));
    },
    describe: (names: string[]) =>
      Promise.resolve(names.map((device) => ({
        device,
        exists: true,
        description: "",
        units: device.startsWith("RF") ? "deg" : "MeV",
        writable: false,
        type: "number" as const,
      }))),
  };
  return { cs: cs as unknown as ControlReader, reads: () => reads };
}

async function setUp() {
  const dir = await tempDir();
  const clock = new ManualClock(NOW);
  const fake = fakeCs(clock);
  const deps = {
    workDir: `${dir.path}/work`,
    scansDir: `${dir.path}/scans`,
    timers: new ClockTimers(clock),
  };
  await Deno.mkdir(deps.workDir, { recursive: true });
  const tools = new ToolRegistry([plotTool(() => deps)], { cs: fake.cs, now: () => clock.now() }, {
    maxOutputChars: 20_000,
    timeoutMs: 60_000,
  });
  const plot = async (args: Record<string, unknown>) => {
    const out = await tools.execute("plot", JSON.stringify(args), new AbortController().signal);
    return { ok: out.ok, result: out.result as Record<string, unknown> };
  };
  return { dir, deps, plot, fake, clock };
}

Deno.test("plot of an archived series saves an SVG and data, and summarises the series with its dip", async () => {
  const s = await setUp();
  await using _ = s.dir;
  const r = await s.plot({
    source: "archive",
    devices: ["RING:DCCT:CURRENT", "NOPE:X"],
    from: "2026-11-20T10:00:00Z",
    to: "2026-11-20T12:00:00Z",
  });
  assert.ok(r.ok, JSON.stringify(r.result));
  const series = r.result.series as Record<string, unknown>[];
  assert.deepEqual(series.map((x) => [x.name, x.units, x.n, x.min, x.max, x.min_at]), [
    ["RING:DCCT:CURRENT", "mA", 121, 250, 301, "2026-11-20T10:30:00.000Z"],
  ]);
  assert.deepEqual(r.result.errors, [{ device: "NOPE:X", error: 'Unknown device "NOPE:X"' }]);
  assert.deepEqual(r.result.x, {
    kind: "time",
    label: "time (UTC)",
    from: "2026-11-20T10:00:00.000Z",
    to: "2026-11-20T12:00:00.000Z",
  });
  const svg = String(r.result.svg);
  assert.ok(svg.startsWith(`${s.deps.workDir}/plots/plot-`) && svg.endsWith(".svg"));
  assert.match(await Deno.readTextFile(svg), /data-name="RING:DCCT:CURRENT"/);
  const data = JSON.parse(await Deno.readTextFile(String(r.result.data_file)));
  assert.equal(data.series[0].points.length, 121);
});

Deno.test("plot of live values reads every interval for the duration, on the injected clock", async () => {
  const s = await setUp();
  await using _ = s.dir;
  const r = await s.plot({ source: "live", devices: ["RF:AMPL:RDBK"], seconds: 5, every: 1 });
  assert.ok(r.ok, JSON.stringify(r.result));
  assert.equal(s.fake.reads(), 6);
  assert.deepEqual(s.deps.timers.delays, [1000, 1000, 1000, 1000, 1000]);
  const [series] = r.result.series as Record<string, unknown>[];
  assert.deepEqual([series?.n, series?.min, series?.max, series?.units], [6, 1, 6, "%"]);
  assert.deepEqual(r.result.x, {
    kind: "time",
    label: "time (UTC)",
    from: new Date(NOW).toISOString(),
    to: new Date(NOW + 5000).toISOString(),
  });
});

Deno.test("plot of a scan takes the plan's recorded CSV by hash, the setpoint as x, and only the columns asked for", async () => {
  const s = await setUp();
  await using _ = s.dir;
  await Deno.mkdir(s.deps.scansDir);
  const name = "scan-0123456789ab-0-2026-11-20T10-00-00-000Z.csv";
  await Deno.writeTextFile(
    `${s.deps.scansDir}/${name}`,
    "time,RF:PHASE:SETPT,RF:PHASE:SETPT:readback,DIAG:ENERGY:MEAS\n" +
      "2026-11-20T10:00:00.000Z,-4,-4.01,100\n2026-11-20T10:00:01.000Z,-5,-5,102\n" +
      "2026-11-20T10:00:02.000Z,-6,-6.02,101\n",
  );
  for (const scan of ["0123456789ab", name]) {
    const r = await s.plot({ source: "scan", scan });
    assert.ok(r.ok, JSON.stringify(r.result));
    assert.deepEqual(r.result.x, { kind: "value", label: "RF:PHASE:SETPT", from: -6, to: -4 });
    const series = r.result.series as Record<string, unknown>[];
    assert.deepEqual(series.map((x) => [x.name, x.units, x.max, x.max_at]), [
      ["RF:PHASE:SETPT:readback", "deg", -4.01, -4],
      ["DIAG:ENERGY:MEAS", "MeV", 102, -5],
    ]);
  }
  // Only the read devices asked for: the energy against the phase, without the phase's readback.
  const energy = await s.plot({ source: "scan", scan: name, columns: ["DIAG:ENERGY:MEAS"] });
  assert.ok(energy.ok, JSON.stringify(energy.result));
  assert.deepEqual((energy.result.series as Record<string, unknown>[]).map((x) => x.name), [
    "DIAG:ENERGY:MEAS",
  ]);
  const missing = await s.plot({ source: "scan", scan: "ffffff" });
  assert.equal(missing.ok, false);
  assert.match(String(missing.result.error), /no scan of a plan ffffff/);
});

Deno.test("plot says in one line what a source is missing or what is wrong with it", async () => {
  const s = await setUp();
  await using _ = s.dir;
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ source: "archive" }, /source archive needs devices/],
    [{ source: "csv" }, /source csv needs file/],
    [{ source: "live", devices: ["A:B"], seconds: 2, every: 0.05 }, /every/],
    [{ source: "archive", devices: ["A:B"], from: "yesterday" }, /from "yesterday" is not a time/],
    [{ source: "archive", devices: ["NOPE:X"] }, /nothing to plot: NOPE:X: Unknown device/],
    [{ source: "csv", file: "../../etc/passwd" }, /not inside the work directory|no such file/],
  ];
  for (const [args, re] of cases) {
    const r = await s.plot(args);
    assert.equal(r.ok, false, JSON.stringify(args));
    assert.match(String(r.result.error), re);
    assert.ok(!String(r.result.error).includes("\n"));
  }
});
