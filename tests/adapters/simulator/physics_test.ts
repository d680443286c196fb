import assert from "node:assert/strict";
import { createSimulator } from "../../../src/adapters/simulator/mod.ts";
import { hasSettled, ManualTimers } from "../../support/manual_timers.ts";
import { readNumber, simAt, T0 } from "./helpers.ts";

const linacBpms = (plane: "X" | "Y") =>
  Array.from({ length: 20 }, (_, i) => `LINAC:BPM:${String(i + 1).padStart(2, "0")}:${plane}`);

async function readAll(sim: ReturnType<typeof simAt>["sim"], names: string[]): Promise<number[]> {
  return (await sim.read(names)).map((r) => typeof r.value === "number" ? r.value : NaN);
}

Deno.test("two reads at the same clock time agree, and noise moves with time", async () => {
  const { sim, clock } = simAt();
  const other = simAt().sim;
  const names = ["LINAC:BPM:05:X", "RING:BPM:33:Y", "DIAG:ENERGY:MEAS", "RF:STN:01:FWD:PWR"];
  const a = await sim.read(names);
  assert.deepEqual(await sim.read(names), a);
  assert.deepEqual(await other.read(names), a);
  assert.equal(a[0]?.timestamp, "2025-03-04T08:00:00.000Z");
  clock.advance(1000);
  const b = await readAll(sim, names);
  assert.ok(b.every((v, i) => v !== a[i]?.value), "noise differs a second later");
});

/** Two noisy readings (σ = 5 µm each) of the same orbit agree within this, mm. */
const NOISE_MM = 0.03;

Deno.test("a linac corrector moves downstream BPMs by R·Δθ and leaves upstream ones alone", async () => {
  const { sim, clock } = simAt();
  const bpms = linacBpms("X");
  const before = await readAll(sim, bpms);
  const vBefore = await readAll(sim, linacBpms("Y"));
  const dTheta = 0.25;
  const initial = await readNumber(sim, "LINAC:COR:H05:SETPT");
  await sim.write("LINAC:COR:H05:SETPT", initial + dTheta);
  clock.advance(5_000); // the corrector ramps at 1 mrad/s
  const after = await readAll(sim, bpms);
  let downstream = 0;
  bpms.forEach((bpm, i) => {
    const r = sim.responseCoefficient(bpm, "LINAC:COR:H05");
    const delta = (after[i] ?? NaN) - (before[i] ?? NaN);
    if (i < 8) assert.equal(r, 0, `${bpm} is upstream of H05`);
    assert.ok(
      Math.abs(delta - r * dTheta) < NOISE_MM,
      `${bpm}: moved ${delta}, expected ${r * dTheta}`,
    );
    if (r !== 0) downstream++;
  });
  assert.ok(downstream >= 10, "most BPMs after H05 respond");
  const vAfter = await readAll(sim, linacBpms("Y"));
  vAfter.forEach((y, i) =>
    assert.ok(Math.abs(y - (vBefore[i] ?? 0)) < NOISE_MM, "a horizontal kick leaves Y alone")
  );
});

Deno.test("a ring corrector moves every ring BPM through the closed-orbit response", async () => {
  const { sim, clock } = simAt();
  const bpms = Array.from({ length: 60 }, (_, i) => `RING:BPM:${String(i + 1).padStart(2, "0")}:Y`);
  const before = await readAll(sim, bpms);
  const initial = await readNumber(sim, "RING:COR:V12:SETPT");
  await sim.write("RING:COR:V12:SETPT", initial - 0.05);
  clock.advance(2_000); // ring correctors ramp at 0.5 mrad/s
  const after = await readAll(sim, bpms);
  const coefficients = bpms.map((b) => sim.responseCoefficient(b, "RING:COR:V12:SETPT"));
  assert.ok(coefficients.every((r) => r !== 0), "a ring has no upstream");
  assert.ok(
    coefficients.some((r) => r > 0) && coefficients.some((r) => r < 0),
    "betatron oscillation",
  );
  bpms.forEach((_, i) => {
    const expected = (coefficients[i] ?? 0) * -0.05;
    assert.ok(Math.abs((after[i] ?? 0) - (before[i] ?? 0) - expected) < NOISE_MM);
  });
});

Deno.test("beam energy follows the RF phase and peaks on crest", async () => {
  const { sim, clock } = simAt();
  // The phase and amplitude ramp (10°/s, 5 %/s); readings 5 s apart differ by noise (σ 0.02 MeV).
  const settle = () => clock.advance(5_000);
  const crest = sim.onCrestPhaseDeg;
  const initialPhase = await readNumber(sim, "RF:PHASE:SETPT");
  const atInitial = await readNumber(sim, "DIAG:ENERGY:MEAS");
  await sim.write("RF:PHASE:SETPT", crest);
  settle();
  const onCrest = await readNumber(sim, "DIAG:ENERGY:MEAS");
  assert.ok(onCrest > atInitial, "moving to crest raises the energy");
  assert.ok(Math.abs(onCrest - 150) < 0.3, `on crest ~150 MeV, got ${onCrest}`);
  // The change is E0·(cos Δφ' − cos Δφ).
  const expected = 150 * (1 - Math.cos(((initialPhase - crest) * Math.PI) / 180));
  assert.ok(Math.abs(onCrest - atInitial - expected) < 0.15);
  for (const offset of [-10, 10]) {
    await sim.write("RF:PHASE:SETPT", crest + offset);
    settle();
    const off = await readNumber(sim, "DIAG:ENERGY:MEAS");
    assert.ok(Math.abs(onCrest - off - 150 * (1 - Math.cos((10 * Math.PI) / 180))) < 0.15);
  }
  await sim.write("RF:PHASE:SETPT", crest);
  await sim.write("RF:AMPL:SETPT", 90);
  settle();
  assert.ok(Math.abs((await readNumber(sim, "DIAG:ENERGY:MEAS")) - 0.9 * 150) < 0.3);
});

Deno.test("alarm severity and status follow each device's thresholds", async () => {
  const { sim, clock } = simAt();
  const bpm = "LINAC:BPM:15:X";
  const r = sim.responseCoefficient(bpm, "LINAC:COR:H03");
  assert.ok(Math.abs(r) > 0.5, `a strong lever arm (${r})`);
  const theta0 = await readNumber(sim, "LINAC:COR:H03:SETPT");
  const x0 = await readNumber(sim, bpm);
  const steerTo = async (x: number) => {
    await sim.write("LINAC:COR:H03:SETPT", theta0 + (x - x0) / r);
    clock.advance(10_000); // the corrector ramps at 1 mrad/s
    const [reading] = await sim.read([bpm]);
    return [reading?.severity, reading?.status];
  };
  assert.deepEqual(await steerTo(0), ["NONE", "NO_ALARM"]);
  assert.deepEqual(await steerTo(1.5), ["MINOR", "HIGH"]);
  assert.deepEqual(await steerTo(2.5), ["MAJOR", "HIHI"]);
  assert.deepEqual(await steerTo(-1.5), ["MINOR", "LOW"]);
  assert.deepEqual(await steerTo(-2.5), ["MAJOR", "LOLO"]);
});

Deno.test("readbacks settle on their setpoints with small noise and offset", async () => {
  const { sim, clock } = simAt();
  const pairs = [
    ["LINAC:COR:H01:SETPT", "LINAC:COR:H01:RDBK", 1.234, 0.005],
    ["RING:Q3:CURRENT", "RING:Q3:RDBK", 412.5, 0.05],
    ["RF:PHASE:SETPT", "RF:PHASE:RDBK", 12.5, 0.2],
    ["RF:STN:02:VOLT:SETPT", "RF:STN:02:CAV:VOLT", 550, 3],
  ] as const;
  for (const [setpoint, readback, value, tolerance] of pairs) {
    await sim.write(setpoint, value);
    assert.equal(await readNumber(sim, setpoint), value);
    clock.advance(60_000); // the slowest, a ring quadrupole family, ramps at 2 A/s
    const rb = await readNumber(sim, readback);
    assert.ok(Math.abs(rb - value) < tolerance, `${readback} = ${rb}, expected ~${value}`);
  }
});

Deno.test("derived signals respond to their causes", async () => {
  const { sim, clock } = simAt();
  const fwdBefore = await readNumber(sim, "RF:STN:01:FWD:PWR");
  await sim.write("RF:STN:01:VOLT:SETPT", 300);
  clock.advance(5_000); // cavity voltage ramps at 100 kV/s
  assert.ok(
    await readNumber(sim, "RF:STN:01:FWD:PWR") < fwdBefore / 2,
    "forward power falls with the cavity voltage (wall loss ∝ V²)",
  );
  const effBefore = await readNumber(sim, "DIAG:INJ:EFF");
  await sim.write("RF:PHASE:SETPT", sim.onCrestPhaseDeg + 20);
  clock.advance(5_000);
  assert.ok(
    await readNumber(sim, "DIAG:INJ:EFF") < effBefore - 20,
    "off-energy beam is not injected",
  );
});

Deno.test("writes are refused with one-line reasons and leave the state unchanged", async () => {
  const { sim } = simAt();
  const before = await sim.read(["LINAC:COR:H01:SETPT", "DIAG:SCREEN:01:POS"]);
  const cases: [string, unknown, RegExp][] = [
    ["LINAC:COR:H99:SETPT", 0, /^Unknown device "LINAC:COR:H99:SETPT"; did you mean/],
    [
      "LINAC:COR:H01:RDBK",
      0,
      /^LINAC:COR:H01:RDBK is read-only; write LINAC:COR:H01:SETPT instead$/,
    ],
    ["DIAG:ENERGY:MEAS", 150, /is read-only/],
    [
      "LINAC:COR:H01:SETPT",
      7,
      /^LINAC:COR:H01:SETPT value 7 is outside its limits \[-5, 5\] mrad$/,
    ],
    ["LINAC:COR:H01:SETPT", -5.01, /outside its limits/],
    ["LINAC:COR:H01:SETPT", NaN, /expects a finite number, got NaN/],
    ["LINAC:COR:H01:SETPT", Infinity, /expects a finite number/],
    ["LINAC:COR:H01:SETPT", "0.5", /expects a finite number, got "0.5"/],
    ["LINAC:COR:H01:SETPT", [1, 2], /expects a finite number, got an array/],
    ["DIAG:SCREEN:01:POS", "MIDDLE", /^DIAG:SCREEN:01:POS expects one of OUT, IN, got "MIDDLE"$/],
    ["MACHINE:MESSAGE", 42, /expects a string/],
  ];
  for (const [name, value, message] of cases) {
    await assert.rejects(sim.write(name, value as number), (e: Error) => {
      assert.match(e.message, message);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
  assert.deepEqual(await sim.read(["LINAC:COR:H01:SETPT", "DIAG:SCREEN:01:POS"]), before);
});

Deno.test("enum and string setpoints accept labels, indices and text", async () => {
  const { sim } = simAt();
  await sim.write("DIAG:SCREEN:01:POS", "IN");
  await sim.write("TIMING:INJ:ENABLE", 0);
  await sim.write("MACHINE:MESSAGE", "MD: optics measurement");
  const values = (await sim.read(["DIAG:SCREEN:01:POS", "TIMING:INJ:ENABLE", "MACHINE:MESSAGE"]))
    .map((r) => r.value);
  assert.deepEqual(values, ["IN", "DISABLED", "MD: optics measurement"]);
});

Deno.test("latency delays calls and an abort signal cancels them", async () => {
  const timers = new ManualTimers();
  const sim = createSimulator({ seed: 1, latencyMs: 200, timers });
  const late = sim.read(["LINAC:BPM:01:X"]);
  await timers.armed(200);
  timers.advance(199);
  assert.equal(await hasSettled(late), false, "still delayed 1 ms before the latency ends");
  timers.advance(1);
  assert.equal((await late)[0]?.ok, true);
  const controller = new AbortController();
  const pending = sim.read(["LINAC:BPM:01:X"], controller.signal);
  controller.abort(new DOMException("stop", "AbortError"));
  await assert.rejects(pending, { name: "AbortError" });
  await assert.rejects(sim.read(["LINAC:BPM:01:X"], AbortSignal.abort()), { name: "AbortError" });
  const fast = createSimulator({ seed: 1 });
  await fast.close();
  await assert.rejects(fast.read(["LINAC:BPM:01:X"]), /closed/);
});

Deno.test("different seeds build different machines on the same namespace", async () => {
  const a = simAt(T0, 1).sim;
  const b = simAt(T0, 2).sim;
  assert.equal(a.deviceCount, b.deviceCount);
  assert.notEqual(await readNumber(a, "RING:BPM:10:X"), await readNumber(b, "RING:BPM:10:X"));
  assert.notEqual(a.onCrestPhaseDeg, b.onCrestPhaseDeg);
});
