/**
 * The simulator's history as a physicist reads it: logs, alarms and the
 * archive stop at "now", and every routine e-log entry that quotes a before
 * and after value (orbit correction, injection tuning, RF phase scan) is
 * what the archive holds on either side of the action, with the setpoints
 * it names changing at that time.
 */
import assert from "node:assert/strict";
import type { LogEntry, Sample } from "../../../src/adapters/adapter.ts";
import type { Simulator } from "../../../src/adapters/simulator/mod.ts";
import { DAY, HOUR, iso, simAt, T0 } from "./helpers.ts";

const MIN = 60_000;
const pad = (n: number) => String(n).padStart(2, "0");
const BPMS = (plane: string) =>
  Array.from({ length: 60 }, (_, i) => `RING:BPM:${pad(i + 1)}:${plane}`);

/** Each device's archived sample at `t` (the archive holds one a second for these). */
async function archivedAt(sim: Simulator, devices: string[], t: number): Promise<number[]> {
  const series = await sim.archive({ devices, from: iso(t), to: iso(t + 1000) });
  return series.map((s) => {
    const v = s.samples[0]?.value;
    if (typeof v !== "number") throw new Error(`${s.device} has no sample at ${iso(t)}`);
    return v;
  });
}

const rms = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + x * x, 0) / xs.length);

/** The minute an entry says the action happened ("at 14:32 UTC"), on the entry's day or the day before. */
function actionMinute(e: LogEntry): number {
  const m = / at (\d\d):(\d\d) UTC/.exec(e.text) ?? / from (\d\d):(\d\d) UTC/.exec(e.text);
  assert.ok(m, e.text);
  const entry = Date.parse(e.time);
  let t = Math.floor(entry / DAY) * DAY + (Number(m[1]) * 60 + Number(m[2])) * MIN;
  if (t > entry) t -= DAY;
  assert.ok(entry - t < HOUR, `${e.time}: ${e.text}`);
  return t;
}

async function routine(sim: Simulator, title: string): Promise<LogEntry[]> {
  const entries = await sim.logs({
    source: "elog",
    from: iso(T0 - 30 * DAY),
    to: iso(T0),
    text: title,
    limit: 1000,
  });
  return entries.filter((e) => e.title === title);
}

Deno.test("logs, alarms and the archive stop at now, whatever range is asked", async () => {
  const { sim, clock } = simAt();
  const range = { from: iso(T0 - 2 * DAY), to: iso(T0 + 2 * DAY), limit: 10_000 };
  const elog = await sim.logs({ source: "elog", ...range });
  const alarms = await sim.logs({ source: "alarm", ...range });
  assert.ok(elog.length > 10 && alarms.length > 10);
  for (const e of [...elog, ...alarms]) assert.ok(Date.parse(e.time) <= T0, `${e.time} ${e.title}`);
  const future = { from: iso(T0 + HOUR), to: iso(T0 + 3 * DAY) };
  assert.deepEqual(await sim.logs({ source: "elog", ...future }), []);
  assert.deepEqual(await sim.logs({ source: "alarm", ...future }), []);
  const series = await sim.archive({
    devices: ["RING:BPM:01:X", "DIAG:INJ:EFF", "RF:STN:03:STATUS"],
    from: iso(T0 - HOUR),
    to: iso(T0 + DAY),
    maxPoints: 100_000,
  });
  for (const s of series) {
    const last = Date.parse(s.samples.at(-1)?.time ?? "");
    assert.ok(last <= T0 && last > T0 - 60_000, `${s.device} ends at ${s.samples.at(-1)?.time}`);
  }
  const binned = await sim.archive({
    devices: ["RING:DCCT:CURRENT"],
    from: iso(T0 - DAY),
    to: iso(T0 + 30 * DAY),
    maxPoints: 50,
  });
  assert.ok((binned[0]?.samples ?? []).every((p: Sample) => Date.parse(p.time) <= T0));
  assert.deepEqual((await sim.archive({ devices: ["DIAG:INJ:EFF"], ...future }))[0]?.samples, []);
  // Time passes: the day that was the future now has its entries, and the past is unchanged.
  clock.advance(2 * DAY);
  const later = await sim.logs({ source: "elog", ...range });
  assert.ok(later.length > elog.length);
  assert.deepEqual(later.filter((e) => Date.parse(e.time) <= T0), elog);
});

Deno.test("every orbit correction in the e-log is the archive's orbit, and its change is the archived kicks through the response", async () => {
  const { sim } = simAt();
  const entries = await routine(sim, "Orbit correction");
  assert.ok(entries.length >= 20, `${entries.length} corrections in 30 days`);
  const correctors = sim.facility.devices.filter((d) =>
    d.name.startsWith("RING:COR:") && d.suffix === "SETPT"
  ).map((d) => d.name);
  for (const e of entries) {
    const m =
      /H rms ([\d.]+) -> ([\d.]+) mm \(from the reference ([\d.]+) -> ([\d.]+) mm\), V rms ([\d.]+) -> ([\d.]+) mm \(from the reference ([\d.]+) -> ([\d.]+) mm\)\. Largest kick change on (\S+) \(([-+][\d.]+) mrad\)/
        .exec(e.text);
    assert.ok(m, e.text);
    const [, h0, h1, , hr1, v0, v1, , vr1, corrector, change] = m;
    const t = actionMinute(e);
    const before = t - MIN, after = t + 2 * MIN;
    const bpmBefore = [
      ...await archivedAt(sim, BPMS("X"), before),
      ...await archivedAt(sim, BPMS("Y"), before),
    ];
    const bpmAfter = [
      ...await archivedAt(sim, BPMS("X"), after),
      ...await archivedAt(sim, BPMS("Y"), after),
    ];
    // BPM noise is 5 µm per reading; the orbit wanders by µm in minutes.
    const near = (got: number, said: string, what: string) =>
      assert.ok(
        Math.abs(got - Number(said)) <= 0.004 + 0.02 * Number(said),
        `${e.time} ${what}: archive ${got}, e-log ${said}`,
      );
    near(rms(bpmBefore.slice(0, 60)), h0 as string, "H rms before");
    near(rms(bpmAfter.slice(0, 60)), h1 as string, "H rms after");
    near(rms(bpmBefore.slice(60)), v0 as string, "V rms before");
    near(rms(bpmAfter.slice(60)), v1 as string, "V rms after");
    assert.ok(
      Number(hr1) <= 0.01 && Number(vr1) <= 0.01,
      `${e.time}: back on the reference: ${e.text}`,
    );
    // The improvement is the kicks' effect: ΔBPM = Σ R·Δθ over every corrector the archive shows moving.
    const k0 = await archivedAt(sim, correctors, before);
    const k1 = await archivedAt(sim, correctors, after);
    const bpms = [...BPMS("X"), ...BPMS("Y")];
    bpms.forEach((bpm, i) => {
      let predicted = 0;
      correctors.forEach((c, j) => {
        const dTheta = (k1[j] ?? 0) - (k0[j] ?? 0);
        if (dTheta !== 0) predicted += sim.responseCoefficient(bpm, c) * dTheta;
      });
      const moved = (bpmAfter[i] ?? 0) - (bpmBefore[i] ?? 0);
      assert.ok(
        Math.abs(moved - predicted) < 0.035,
        `${e.time} ${bpm}: moved ${moved} mm, the kicks through the response give ${predicted}`,
      );
    });
    const j = correctors.indexOf(corrector as string);
    assert.ok(j >= 0, `${corrector} is a ring corrector`);
    assert.ok(
      Math.abs((k1[j] ?? 0) - (k0[j] ?? 0) - Number(change)) < 1e-4,
      `${e.time} ${corrector}: ${k0[j]} -> ${k1[j]}, e-log ${change}`,
    );
  }
});

Deno.test("every injection tuning in the e-log is the efficiency and the steering the archive holds, and the trajectory moved as the kicks make it", async () => {
  const { sim } = simAt();
  const entries = await routine(sim, "Injection tuning");
  assert.ok(entries.length >= 10, `${entries.length} tunings in 30 days`);
  const injectionBpms = sim.facility.spec.injector.injectionBpms;
  for (const e of entries) {
    const m =
      /Injection efficiency (\d+)% -> (\d+)% after steering onto the injection BPMs at .* with (.*)\.$/
        .exec(e.text);
    assert.ok(m, e.text);
    const [, e0, e1, steering] = m;
    const kicks = [...(steering ?? "").matchAll(/(\S+) \(([-+][\d.]+) mrad\)/g)].map((x) => ({
      device: x[1] as string,
      change: Number(x[2]),
    }));
    assert.equal(kicks.length, 4, e.text);
    const t = actionMinute(e);
    const [effBefore] = await archivedAt(sim, ["DIAG:INJ:EFF"], t - MIN);
    const [effAfter] = await archivedAt(sim, ["DIAG:INJ:EFF"], t + 2 * MIN);
    // Readings scatter by 0.4 %; the e-log rounds to whole per cent.
    assert.ok(
      Math.abs((effBefore as number) - Number(e0)) <= 2,
      `${e.time}: ${effBefore} vs ${e0}`,
    );
    assert.ok(Math.abs((effAfter as number) - Number(e1)) <= 2, `${e.time}: ${effAfter} vs ${e1}`);
    assert.ok(
      Number(e1) >= Number(e0) - 1,
      `steering onto the BPMs does not cost efficiency: ${e.text}`,
    );
    const k0 = await archivedAt(sim, kicks.map((k) => k.device), t - MIN);
    const k1 = await archivedAt(sim, kicks.map((k) => k.device), t + 2 * MIN);
    kicks.forEach((k, i) =>
      assert.ok(
        Math.abs((k1[i] ?? 0) - (k0[i] ?? 0) - k.change) < 1e-3,
        `${e.time} ${k.device}: ${k0[i]} -> ${k1[i]}, e-log ${k.change}`,
      )
    );
    const b0 = await archivedAt(sim, injectionBpms, t - MIN);
    const b1 = await archivedAt(sim, injectionBpms, t + 2 * MIN);
    injectionBpms.forEach((bpm, i) => {
      let predicted = 0;
      kicks.forEach((k, j) =>
        predicted += sim.responseCoefficient(bpm, k.device) * ((k1[j] ?? 0) - (k0[j] ?? 0))
      );
      const moved = (b1[i] ?? 0) - (b0[i] ?? 0);
      assert.ok(
        Math.abs(moved - predicted) < 0.035,
        `${e.time} ${bpm}: ${moved} vs R·Δθ ${predicted}`,
      );
    });
  }
});

Deno.test("every RF phase scan in the e-log is in the archive: the setpoint steps ±10°, the energy peaks on crest", async () => {
  const { sim } = simAt();
  const entries = await routine(sim, "Linac RF phase scan");
  assert.ok(entries.length >= 3, `${entries.length} scans in 30 days`);
  for (const e of entries) {
    const m = /peaks at (-?[\d.]+) deg \(on crest\)\. Operating point left at (-?[\d.]+) deg/.exec(
      e.text,
    );
    assert.ok(m, e.text);
    const [peak, operating] = [Number(m[1]), Number(m[2])];
    const t = actionMinute(e);
    const [phase, energy] = await sim.archive({
      devices: ["RF:PHASE:SETPT", "DIAG:ENERGY:MEAS"],
      from: iso(t),
      to: iso(t + 15 * MIN),
      maxPoints: 100_000,
    });
    // Mean energy at each phase the scan held.
    const byPhase = new Map<number, number[]>();
    (phase?.samples ?? []).forEach((p, i) => {
      const e = energy?.samples[i]?.value;
      if (typeof p.value === "number" && typeof e === "number") {
        byPhase.set(p.value, [...(byPhase.get(p.value) ?? []), e]);
      }
    });
    const phases = [...byPhase.keys()].sort((a, b) => a - b);
    assert.equal(phases[0], operating - 10, `${e.time}: ${phases}`);
    assert.equal(phases.at(-1), operating + 10);
    assert.equal(phases.length, 21);
    assert.equal(phase?.samples.at(-1)?.value, operating, "left at the operating point");
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const best = phases.reduce((
      a,
      b,
    ) => (mean(byPhase.get(b) ?? []) > mean(byPhase.get(a) ?? []) ? b : a));
    assert.ok(
      Math.abs(best - peak) <= 1.5,
      `${e.time}: the archive peaks at ${best}, the e-log says ${peak}`,
    );
  }
});

Deno.test("the energy alarms an RF phase scan raises are in the alarm log, at the archive's crossings", async () => {
  const { sim } = simAt();
  const [scan] = await routine(sim, "Linac RF phase scan");
  assert.ok(scan);
  const t = actionMinute(scan);
  const alarms = await sim.logs({
    source: "alarm",
    from: iso(t),
    to: iso(t + 12 * MIN),
    device: "DIAG:ENERGY:MEAS",
  });
  const [energy] = await sim.archive({
    devices: ["DIAG:ENERGY:MEAS"],
    from: iso(t),
    to: iso(t + 12 * MIN),
    maxPoints: 100_000,
  });
  const archived = new Set((energy?.samples ?? []).map((s) => s.severity));
  // Noise-free, a ±10° scan crosses the LOW limit (148 MeV) when it goes far enough off crest.
  if (archived.has("MINOR") || archived.has("MAJOR")) {
    assert.ok(alarms.length > 0, "the alarm log has the scan's alarms");
  }
  for (const a of alarms) {
    const [s] = await sim.archive({
      devices: ["DIAG:ENERGY:MEAS"],
      from: iso(Date.parse(a.time) + 1000),
      to: iso(Date.parse(a.time) + 2000),
    });
    assert.equal(
      s?.samples[0]?.severity === "NONE" ? "NONE" : "ALARM",
      a.severity === "NONE" ? "NONE" : "ALARM",
      a.text,
    );
  }
});

Deno.test("no e-log entry reports a time after it was written", async () => {
  const { sim } = simAt();
  const entries = await sim.logs({
    source: "elog",
    from: iso(T0 - 60 * DAY),
    to: iso(T0),
    limit: 10_000,
  });
  assert.ok(entries.length > 500);
  for (const e of entries) {
    const written = Date.parse(e.time);
    const day = Math.floor(written / DAY) * DAY;
    // "at 14:32 UTC", "by 14:40.", "fixed at 14:32 UTC": each is on the entry's day or the day before.
    for (const m of e.text.matchAll(/(\d\d):(\d\d)(?::(\d\d))?(?: UTC|\.)/g)) {
      const clock = (Number(m[1]) * 60 + Number(m[2])) * MIN + Number(m[3] ?? 0) * 1000;
      const sameDay = day + clock;
      const t = sameDay <= written ? sameDay : sameDay - DAY;
      assert.ok(
        written - t < 20 * HOUR,
        `${e.time} "${e.title}" reports ${m[0]}, after it was written`,
      );
    }
  }
});

Deno.test("readbacks follow the crews' routine setpoints: the correctors they moved and the phase they scanned", async () => {
  const { sim } = simAt();
  // Readbacks scatter by 0.5 µrad around a fixed offset of at most half that.
  const [tuning] = await routine(sim, "Injection tuning");
  const [correction] = await routine(sim, "Orbit correction");
  const moved = [
    ...[...(tuning?.text ?? "").matchAll(/(\S+):SETPT \(/g)].map((m) => m[1] as string),
    .../Largest kick change on (\S+):SETPT/.exec(correction?.text ?? "")?.slice(1) ?? [],
  ];
  assert.equal(moved.length, 5, `${tuning?.text} ${correction?.text}`);
  for (const name of moved) {
    const [setpoint, readback] = await sim.read([`${name}:SETPT`, `${name}:RDBK`]);
    const [s, r] = [Number(setpoint?.value), Number(readback?.value)];
    assert.ok(Math.abs(r - s) < 0.003, `${name}: setpoint ${s}, readback ${r}`);
  }
  // The phase readback steps with the scan (10°/s: a step settles within a second).
  const [scan] = await routine(sim, "Linac RF phase scan");
  assert.ok(scan);
  const t = actionMinute(scan);
  const [setpoint, readback] = await sim.archive({
    devices: ["RF:PHASE:SETPT", "RF:PHASE:RDBK"],
    from: iso(t),
    to: iso(t + 15 * MIN),
    maxPoints: 100_000,
  });
  const setAt = new Map((setpoint?.samples ?? []).map((p) => [Date.parse(p.time), p.value]));
  let compared = 0;
  const phases = new Set<number>();
  for (const p of readback?.samples ?? []) {
    const at = Date.parse(p.time);
    const now = setAt.get(at);
    if (typeof now !== "number" || setAt.get(at - 1000) !== now) continue;
    assert.ok(
      Math.abs(Number(p.value) - now) < 0.2,
      `${p.time}: setpoint ${now}, readback ${p.value}`,
    );
    phases.add(now);
    compared++;
  }
  assert.ok(phases.size === 21 && compared > 300, `${compared} samples at ${phases.size} phases`);
});
