import assert from "node:assert/strict";
import type { Sample } from "../../../src/adapters/adapter.ts";
import { DEFAULT_MAX_POINTS } from "../../../src/adapters/simulator/mod.ts";
import { DAY, HOUR, iso, simAt, T0 } from "./helpers.ts";

const times = (samples: Sample[] | undefined) => (samples ?? []).map((s) => Date.parse(s.time));

Deno.test("archive is deterministic for a seed and range", async () => {
  const q = {
    devices: ["RING:BPM:12:X", "RING:DCCT:CURRENT", "RF:STN:03:STATUS"],
    from: iso(T0 - DAY),
    to: iso(T0),
  };
  const a = await simAt(T0, 1).sim.archive(q);
  const b = await simAt(T0, 1).sim.archive(q);
  const c = await simAt(T0, 2).sim.archive(q);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

Deno.test("short ranges return raw samples on the device's archive period", async () => {
  const { sim } = simAt();
  const [bpm, gauge] = await sim.archive({
    devices: ["LINAC:BPM:03:X", "RING:VAC:IG:05:PRES"],
    from: iso(T0 - 10 * 60_000 + 500),
    to: iso(T0),
  });
  assert.equal(bpm?.ok, true);
  assert.equal(bpm?.units, "mm");
  assert.equal(bpm?.samples.length, 599, "1 s period, first whole second after from");
  assert.ok(times(bpm?.samples).every((t) => t % 1000 === 0));
  assert.equal(gauge?.samples.length, 59, "vacuum gauges archive every 10 s");
  assert.ok(bpm?.samples.every((s) => typeof s.value === "number" && s.severity === "NONE"));
});

Deno.test("long ranges are binned to at most maxPoints means", async () => {
  const { sim } = simAt();
  // The gun's high voltage: noisy, and wandering slowly over hours.
  const [day] = await sim.archive({
    devices: ["LINAC:GUN:HV"],
    from: iso(T0 - DAY),
    to: iso(T0),
    maxPoints: 500,
  });
  const n = day?.samples.length ?? 0;
  assert.ok(n <= 500 && n >= 400, `${n} bins`);
  const t = times(day?.samples);
  assert.ok(t.every((x, i) => x >= T0 - DAY && x < T0 && (i === 0 || x > (t[i - 1] ?? 0))));
  // A mean of noisy samples is smoother than the raw signal.
  const [raw] = await sim.archive({
    devices: ["LINAC:GUN:HV"],
    from: iso(T0 - 500_000),
    to: iso(T0),
  });
  // Bin to bin, the means jump less than raw samples do sample to sample (the noise averages out).
  const jitter = (s: Sample[] | undefined) => {
    const xs = (s ?? []).map((p) => Number(p.value));
    return xs.slice(1).reduce((a, x, i) => a + Math.abs(x - (xs[i] ?? x)), 0) / (xs.length - 1);
  };
  assert.ok(
    jitter(day?.samples) < jitter(raw?.samples),
    `${jitter(day?.samples)} vs ${jitter(raw?.samples)}`,
  );
});

Deno.test("a one-year request returns at most the default number of points", async () => {
  const { sim } = simAt();
  const devices = [
    "RING:DCCT:CURRENT",
    "RF:STN:03:CAV:VOLT",
    "RING:TUNNEL:TEMP:001",
    "MACHINE:MODE",
  ];
  const series = await sim.archive({ devices, from: iso(T0 - 365 * DAY), to: iso(T0) });
  for (const s of series) {
    assert.equal(s.ok, true, s.device);
    assert.ok(
      s.samples.length <= DEFAULT_MAX_POINTS && s.samples.length > 900,
      `${s.device}: ${s.samples.length}`,
    );
  }
  const modes = new Set(series[3]?.samples.map((s) => s.value));
  assert.ok(modes.has("USER"), "enum bins keep labels");
});

Deno.test("the same device and time give the same value whatever range is asked", async () => {
  const { sim } = simAt();
  const device = "RF:STN:01:FWD:PWR";
  const [wide] = await sim.archive({
    devices: [device],
    from: iso(T0 - HOUR),
    to: iso(T0),
    maxPoints: 5000,
  });
  const [narrow] = await sim.archive({
    devices: [device],
    from: iso(T0 - 600_000),
    to: iso(T0 + 300_000),
  });
  const byTime = new Map(wide?.samples.map((s) => [s.time, s.value]));
  const shared = narrow?.samples.filter((s) => byTime.has(s.time)) ?? [];
  assert.equal(shared.length, 600);
  for (const s of shared) assert.equal(s.value, byTime.get(s.time));
  const [bins1] = await sim.archive({
    devices: [device],
    from: iso(T0 - 10 * DAY),
    to: iso(T0),
    maxPoints: 242, // 10 days in bins of 10 d / (242 - 2) = 1 h
  });
  const [bins2] = await sim.archive({
    devices: [device],
    from: iso(T0 - 5 * DAY),
    to: iso(T0),
    maxPoints: 122, // 5 days in the same 1 h bins
  });
  const binned = new Map(bins1?.samples.map((s) => [s.time, s.value]));
  const common = bins2?.samples.slice(1).filter((s) => binned.has(s.time)) ?? [];
  assert.ok(common.length > 100, "aligned bins of equal width coincide");
  for (const s of common) assert.equal(s.value, binned.get(s.time));
});

Deno.test("archived samples equal live reads at the same time", async () => {
  const { sim, clock } = simAt();
  const devices = ["LINAC:BPM:07:Y", "DIAG:ENERGY:MEAS", "RING:LIFETIME"];
  const series = await sim.archive({ devices, from: iso(T0 - 60_000), to: iso(T0 + 1) });
  clock.set(T0 - 60_000 + 50_000); // a whole multiple of every period used above
  const live = await sim.read(devices);
  devices.forEach((d, i) => {
    const sample = series[i]?.samples.find((s) => s.time === iso(clock.now()));
    assert.ok(sample, d);
    assert.equal(sample.value, live[i]?.value);
  });
});

Deno.test("archive shows writes from the moment they were made", async () => {
  const { sim, clock } = simAt();
  const initial = (await sim.read(["LINAC:COR:H02:SETPT"]))[0]?.value;
  clock.set(T0 + 5_000);
  await sim.write("LINAC:COR:H02:SETPT", 1.5);
  clock.set(T0 + 20_000);
  const [setpt, bpm] = await sim.archive({
    devices: ["LINAC:COR:H02:SETPT", "LINAC:BPM:20:X"],
    from: iso(T0),
    to: iso(T0 + 10_000),
  });
  assert.deepEqual(setpt?.samples.map((s) => s.value), [
    ...Array(5).fill(initial),
    ...Array(5).fill(1.5),
  ]);
  // The corrector ramps at 1 mrad/s, so the beam has followed the whole step two seconds later.
  const r = sim.responseCoefficient("LINAC:BPM:20:X", "LINAC:COR:H02");
  const [x4, x7] = [bpm?.samples[4]?.value, bpm?.samples[7]?.value].map(Number);
  assert.ok(Math.abs((x7 ?? 0) - (x4 ?? 0) - r * (1.5 - Number(initial))) < 0.05);
});

Deno.test("unknown devices and waveforms are not archived", async () => {
  const { sim } = simAt();
  const [unknown, waveform, ok] = await sim.archive({
    devices: ["RING:BPM:61:X", "RING:BPM:01:TBT:X", "RING:BPM:01:X"],
    from: iso(T0 - 60_000),
    to: iso(T0),
  });
  assert.equal(unknown?.ok, false);
  assert.match(unknown?.error ?? "", /^not archived: Unknown device "RING:BPM:61:X"; did you mean/);
  assert.equal(waveform?.ok, false);
  assert.match(waveform?.error ?? "", /not archived/);
  assert.equal(ok?.ok, true);
  await assert.rejects(
    sim.archive({ devices: ["RING:BPM:01:X"], from: "then", to: iso(T0) }),
    RangeError,
  );
});
