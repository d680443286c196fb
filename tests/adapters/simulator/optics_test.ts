/**
 * The measurements a physicist makes on the simulated ring, against the
 * lattice and its formulas: photon BPMs against the electron orbit at their
 * source points, turn-by-turn phases and amplitudes against the lattice's
 * phase advances and √β, the dispersion orbit of an RF frequency step against
 * η and α_c, the chromaticity from the sextupoles and from the tunes' shift
 * with energy, a dipole step at fixed RF frequency, the orbit's growth
 * towards the integer, and the kick an off-centre beam gets in a quadrupole.
 */

import assert from "node:assert/strict";
import type { Simulator } from "../../../src/adapters/simulator/mod.ts";
import type { LatticePoint } from "../../../src/facility/lattice.ts";
import { lineResponse, ringAngleResponse, ringResponse } from "../../../src/facility/optics.ts";
import { readNumber, simAt } from "./helpers.ts";

const pad = (n: number) => String(n).padStart(2, "0");
const ringBpms = (plane: "X" | "Y") =>
  Array.from({ length: 60 }, (_, i) => `RING:BPM:${pad(i + 1)}:${plane}`);

function point(sim: Simulator, prefix: string): LatticePoint {
  const at = sim.model.optics.lattice.points.get(prefix);
  if (at === undefined) throw new Error(`${prefix} is not in the lattice`);
  return at;
}

async function readAll(sim: Simulator, names: string[]): Promise<number[]> {
  return (await sim.read(names)).map((r) => Number(r.value));
}

/** The live state behind the simulator, for evaluating the model without noise. */
function state(sim: Simulator) {
  return (sim as unknown as { setpoints: Parameters<Simulator["model"]["value"]>[2] }).setpoints;
}

Deno.test("a photon BPM reads x + L·x' of the electron orbit at its source point, against the reference", async () => {
  const { sim, clock } = simAt();
  const constants = sim.model.orbit.ringConstants;
  assert.ok(constants);
  for (
    const [beamline, corrector] of [["BL:04", "RING:COR:H07"], ["BL:17", "RING:COR:V05"]] as const
  ) {
    const plane = corrector.includes(":V") ? 1 : 0;
    const device = `${beamline}:XBPM:${plane === 0 ? "X" : "Y"}`;
    const src = sim.model.optics.lattice.sources.get(beamline);
    assert.ok(src, beamline);
    const before = await readNumber(sim, device);
    const theta = await readNumber(sim, `${corrector}:SETPT`);
    await sim.write(`${corrector}:SETPT`, theta + 0.02);
    clock.advance(2_000);
    const after = await readNumber(sim, device);
    const j = point(sim, corrector);
    const nu = constants.tunes[plane] ?? 0;
    const expected = 1000 * 0.02 *
      (ringResponse(src.at, j, plane, nu, constants) +
        src.armM * ringAngleResponse(src.at, j, plane, nu, constants));
    // Noise 0.3 µm per reading, and the electronics wander by well under a µm in seconds.
    assert.ok(
      Math.abs(after - before - expected) < 1.5 + 0.02 * Math.abs(expected),
      `${device}: moved ${after - before} µm, x + L·x' gives ${expected}`,
    );
    assert.ok(Math.abs(expected) > 5, `${device} sees a 20 µrad kick (${expected} µm)`);
  }
});

/** Amplitude and phase of e^(−n/120)·(A cos 2πνn + B sin 2πνn) fitted, with a constant, to a waveform. */
function fitBetatron(wave: number[], nu: number): { amplitude: number; phase: number } {
  const rows = wave.map((_, n) => {
    const d = Math.exp(-n / 120);
    return [d * Math.cos(2 * Math.PI * nu * n), d * Math.sin(2 * Math.PI * nu * n), 1];
  });
  // Normal equations, 3 × 3, solved by Cramer's rule.
  const m = [0, 1, 2].map((i) =>
    [0, 1, 2].map((j) => rows.reduce((s, r) => s + (r[i] ?? 0) * (r[j] ?? 0), 0))
  );
  const v = [0, 1, 2].map((i) => rows.reduce((s, r, n) => s + (r[i] ?? 0) * (wave[n] ?? 0), 0));
  const det = (a: number[][]) =>
    a[0]![0]! * (a[1]![1]! * a[2]![2]! - a[1]![2]! * a[2]![1]!) -
    a[0]![1]! * (a[1]![0]! * a[2]![2]! - a[1]![2]! * a[2]![0]!) +
    a[0]![2]! * (a[1]![0]! * a[2]![1]! - a[1]![1]! * a[2]![0]!);
  const d = det(m);
  const solve = (k: number) => det(m.map((row, i) => row.map((x, j) => (j === k ? v[i]! : x)))) / d;
  const a = solve(0);
  const b = solve(1);
  // A cos x + B sin x = R cos(x + φ) with R cos φ = A, −R sin φ = B.
  return { amplitude: Math.hypot(a, b), phase: Math.atan2(-b, a) };
}

Deno.test("turn-by-turn data give the lattice's phase advances between BPMs, and amplitudes in proportion to √β", async () => {
  const { sim, clock } = simAt();
  const nu = sim.model.tunes(clock.now(), state(sim));
  const bpms = [1, 2, 3, 10, 31, 58].map((i) => `RING:BPM:${pad(i)}`);
  for (const [plane, letter] of [[0, "X"], [1, "Y"]] as const) {
    // Five acquisitions (five pinger shots): phases and amplitudes averaged over them.
    const dphase = bpms.map(() => [0, 0]);
    const ratio = bpms.map(() => 0);
    for (let shot = 0; shot < 5; shot++) {
      clock.advance(1_000);
      const waves = await sim.read(bpms.map((b) => `${b}:TBT:${letter}`));
      const fits = waves.map((w) => fitBetatron(w.value as number[], (nu[plane] ?? 0) % 1));
      const a0 = fits[0];
      assert.ok(
        a0 && a0.amplitude > 0.05,
        `a betatron oscillation is recorded (${a0?.amplitude} mm)`,
      );
      fits.forEach((f, k) => {
        dphase[k] = [
          (dphase[k]?.[0] ?? 0) + Math.cos(f.phase - a0.phase),
          (dphase[k]?.[1] ?? 0) + Math.sin(f.phase - a0.phase),
        ];
        ratio[k] = (ratio[k] ?? 0) + f.amplitude / a0.amplitude / 5;
      });
    }
    const first = point(sim, bpms[0] as string);
    bpms.slice(1).forEach((b, j) => {
      const k = j + 1;
      const at = point(sim, b);
      const lattice = (at.phase[plane] ?? 0) - (first.phase[plane] ?? 0);
      const measured = Math.atan2(dphase[k]?.[1] ?? 0, dphase[k]?.[0] ?? 0);
      const diff = Math.atan2(Math.sin(measured - lattice), Math.cos(measured - lattice));
      assert.ok(
        Math.abs(diff) < 0.03,
        `${b} ${letter}: phase advance ${measured} vs lattice ${lattice}`,
      );
      const expected = Math.sqrt((at.beta[plane] ?? 0) / (first.beta[plane] ?? 1));
      assert.ok(
        Math.abs((ratio[k] ?? 0) / expected - 1) < 0.03,
        `${b} ${letter}: amplitude ratio ${ratio[k]} vs √β ${expected}`,
      );
    });
  }
});

Deno.test("an RF frequency step moves the orbit by η·δ, δ = −(Δf/f)/α_c, and the tunes by ξ·δ", async () => {
  const { sim, clock } = simAt();
  const ring = sim.model.ring;
  assert.ok(ring);
  const f0 = await readNumber(sim, "RF:MO:FREQ:SETPT");
  const x0 = await readAll(sim, ringBpms("X"));
  const y0 = await readAll(sim, ringBpms("Y"));
  const e0 = await readNumber(sim, "RING:ENERGY");
  const t = clock.now();
  const nu0 = sim.model.tunes(t, state(sim));
  const xi = sim.model.chromaticity(t, state(sim));
  const df = 0.0005; // 500 Hz
  await sim.write("RF:MO:FREQ:SETPT", f0 + df);
  clock.advance(10_000); // 100 Hz/s
  assert.ok(
    Math.abs((await readNumber(sim, "RF:MO:FREQ")) - (f0 + df)) < 3e-6,
    "the readback follows",
  );
  const delta = -(df / f0) / ring.alphaC;
  const x1 = await readAll(sim, ringBpms("X"));
  const y1 = await readAll(sim, ringBpms("Y"));
  ringBpms("X").forEach((bpm, i) => {
    const eta = point(sim, bpm.replace(/:X$/, "")).eta;
    const moved = (x1[i] ?? 0) - (x0[i] ?? 0);
    assert.ok(
      Math.abs(moved - 1000 * eta * delta) < 0.035,
      `${bpm}: ${moved} vs η·δ ${1000 * eta * delta}`,
    );
    assert.ok(Math.abs((y1[i] ?? 0) - (y0[i] ?? 0)) < 0.035, "no vertical dispersion");
  });
  assert.ok(Math.abs((await readNumber(sim, "RING:ENERGY")) - e0 * (1 + delta)) < 0.05);
  const nu1 = sim.model.tunes(clock.now(), state(sim));
  for (const p of [0, 1]) {
    const shift = (nu1[p] ?? 0) - (nu0[p] ?? 0);
    assert.ok(Math.abs(shift - (xi[p] ?? 0) * delta) < 1e-6, `plane ${p}: Δν ${shift} vs ξ·δ`);
  }
  assert.ok(
    Math.abs(delta) > 1e-4 && Math.max(...x1.map((x, i) => Math.abs(x - (x0[i] ?? 0)))) > 0.05,
  );
});

Deno.test("a sextupole step moves the chromaticity by ±Σβ·η·ΔK₂L/4π, and the tunes' shift with an RF step measures it", async () => {
  const { sim, clock } = simAt();
  const f = sim.model.optics.sextupoles.find((s) => s.magnet.name === "RING:S1:CURRENT");
  assert.ok(f);
  const i0 = Number(sim.model.initial.get(f.magnet.name));
  const [cx0, cy0] = await readAll(sim, ["RING:CHROM:X", "RING:CHROM:Y"]);
  await sim.write("RING:S1:CURRENT", i0 + 6);
  clock.advance(5_000); // 2 A/s
  const dk2l = (f.strength * 6) / i0;
  const [cx1, cy1] = await readAll(sim, ["RING:CHROM:X", "RING:CHROM:Y"]);
  // Chromaticity readings carry 0.05 of noise.
  assert.ok(
    Math.abs((cx1 ?? 0) - (cx0 ?? 0) - f.weight[0] * dk2l) < 0.2,
    `Δξx ${(cx1 ?? 0) - (cx0 ?? 0)}`,
  );
  assert.ok(
    Math.abs((cy1 ?? 0) - (cy0 ?? 0) + f.weight[1] * dk2l) < 0.2,
    `Δξy ${(cy1 ?? 0) - (cy0 ?? 0)}`,
  );
  assert.ok(f.weight[0] * dk2l > 0.3, "the step is measurable");
  // The chromaticity measurement: tune shift per relative energy step of the RF frequency.
  const ring = sim.model.ring;
  assert.ok(ring);
  const f0 = await readNumber(sim, "RF:MO:FREQ:SETPT");
  const nu0 = sim.model.tunes(clock.now(), state(sim));
  await sim.write("RF:MO:FREQ:SETPT", f0 - 0.001);
  clock.advance(15_000);
  const nu1 = sim.model.tunes(clock.now(), state(sim));
  const delta = (0.001 / f0) / ring.alphaC;
  const measured = ((nu1[0] ?? 0) - (nu0[0] ?? 0)) / delta;
  assert.ok(Math.abs(measured - (cx1 ?? 0)) < 0.2, `Δν/δ = ${measured}, reads ${cx1}`);
});

Deno.test("a ring dipole step at fixed RF frequency moves the energy with the field and the tunes by ξ₀·δ, not the orbit", async () => {
  const { sim, clock } = simAt();
  const natural = sim.model.optics.ring?.ring?.naturalChromaticity;
  assert.ok(natural);
  const i0 = await readNumber(sim, "RING:DIPOLE:CURRENT");
  const e0 = await readNumber(sim, "RING:ENERGY");
  const x0 = await readAll(sim, ringBpms("X"));
  const nu0 = sim.model.tunes(clock.now(), state(sim));
  await sim.write("RING:DIPOLE:CURRENT", i0 + 0.2);
  clock.advance(5_000); // 1 A/s
  const delta = 0.2 / i0;
  assert.ok(Math.abs((await readNumber(sim, "RING:ENERGY")) - e0 * (1 + delta)) < 0.05);
  const x1 = await readAll(sim, ringBpms("X"));
  assert.ok(
    x1.every((x, i) => Math.abs(x - (x0[i] ?? 0)) < 0.035),
    "the beam stays on the same orbit",
  );
  const nu1 = sim.model.tunes(clock.now(), state(sim));
  for (const p of [0, 1]) {
    assert.ok(Math.abs((nu1[p] ?? 0) - (nu0[p] ?? 0) - (natural[p] ?? 0) * delta) < 1e-6);
  }
});

Deno.test("the closed orbit grows as 1/sin(πν) when the tune nears the integer: a warning before the loss", async () => {
  const { sim, clock } = simAt();
  const offsets = ringBpms("X").map((b) => sim.model.optics.offset.get(b) ?? 0);
  const orbit = async () =>
    (await readAll(sim, ringBpms("X"))).map((x, i) => x - (offsets[i] ?? 0));
  const rms = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + x * x, 0) / xs.length);
  const near = sim.model.tunes(clock.now(), state(sim))[0] ?? 0;
  const before = rms(await orbit());
  // Q3 moves ν_x by 0.042 per A: 3.6 A takes it from .23 to about .08.
  const q3 = await readNumber(sim, "RING:Q3:CURRENT");
  await sim.write("RING:Q3:CURRENT", q3 - 3.6);
  clock.advance(5_000);
  const nu = sim.model.tunes(clock.now(), state(sim))[0] ?? 0;
  assert.ok(nu % 1 < 0.12 && nu % 1 > 0.05, `ν_x ${nu}`);
  const after = rms(await orbit());
  const expected = Math.sin(Math.PI * near) / Math.sin(Math.PI * nu);
  assert.ok(
    Math.abs(after / before / expected - 1) < 0.35,
    `grew ${after / before}, 1/sin πν gives ${expected}`,
  );
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) > 250, "not lost yet");
});

Deno.test("the lifetime falls as the orbit nears the aperture, before the beam is lost", async () => {
  const { sim, clock } = simAt();
  const ring = sim.model.ring;
  assert.ok(ring);
  const bpm = "RING:BPM:20:Y";
  const correctors = Array.from({ length: 40 }, (_, i) => `RING:COR:V${pad(i + 1)}:SETPT`);
  const start = await readAll(sim, correctors);
  const signs = correctors.map((c) => Math.sign(sim.responseCoefficient(bpm, c)));
  // The bump's size at which some BPM's orbit reaches the aperture √(A·β).
  let reach = Infinity;
  for (const b of ringBpms("Y")) {
    const at = point(sim, b.replace(/:Y$/, ""));
    const a = Math.sqrt((ring.acceptanceMmMrad[1] ?? 1) * (at.beta[1] ?? 1));
    const perUnit = Math.abs(
      correctors.reduce((s, c, k) => s + sim.responseCoefficient(b, c) * (signs[k] ?? 0), 0),
    );
    reach = Math.min(reach, a / perUnit);
  }
  const lifetimes: number[] = [];
  for (const fraction of [0, 0.4, 0.7, 0.85]) {
    for (const [k, c] of correctors.entries()) {
      await sim.write(c, (start[k] ?? 0) + fraction * reach * (signs[k] ?? 0));
    }
    clock.advance(60_000);
    assert.ok(
      (await readNumber(sim, "RING:DCCT:CURRENT")) > 100,
      `still stored at ${fraction} of the aperture`,
    );
    lifetimes.push(await readNumber(sim, "RING:LIFETIME"));
  }
  assert.ok(
    lifetimes.every((l, i) => i === 0 || l < (lifetimes[i - 1] ?? Infinity)),
    `${lifetimes}`,
  );
  assert.ok(
    (lifetimes.at(-1) ?? 0) < 0.5 * (lifetimes[0] ?? 0),
    `the lifetime dropped: ${lifetimes}`,
  );
  // Past the aperture the beam is lost.
  for (const [k, c] of correctors.entries()) {
    await sim.write(c, (start[k] ?? 0) + 1.2 * reach * (signs[k] ?? 0));
  }
  clock.advance(60_000);
  assert.ok((await readNumber(sim, "RING:DCCT:CURRENT")) < 0.05);
});

Deno.test("an off-centre beam in a linac quadrupole is kicked by ΔK·L·x: the BPMs downstream move by R·ΔKL·x", async () => {
  const { sim, clock } = simAt();
  const quad = sim.facility.byName.get("LINAC:QUAD:05:CURRENT");
  assert.ok(quad);
  const q = point(sim, "LINAC:QUAD:05");
  const bpms = Array.from({ length: 20 }, (_, i) => `LINAC:BPM:${pad(i + 1)}:X`);
  const before = await readAll(sim, bpms);
  const xq = sim.model.orbit.position(q, 0, clock.now(), state(sim));
  const i0 = await readNumber(sim, "LINAC:QUAD:05:CURRENT");
  await sim.write("LINAC:QUAD:05:CURRENT", i0 + 5);
  clock.advance(2_000); // 5 A/s
  const after = await readAll(sim, bpms);
  const dkl = (0.3 * 5) / Number(sim.model.initial.get(quad.name)); // odd quadrupoles focus
  bpms.forEach((bpm, i) => {
    const r = lineResponse(sim.model.optics.lattice, point(sim, bpm.replace(/:X$/, "")), q, 0);
    const moved = (after[i] ?? 0) - (before[i] ?? 0);
    assert.ok(
      Math.abs(moved - r * dkl * xq) < 0.035,
      `${bpm}: ${moved} vs R·ΔKL·x ${r * dkl * xq}`,
    );
  });
});
