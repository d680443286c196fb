/**
 * The facility's incidents as causes: each changes an input of the machine
 * (a cavity's field, a gauge's pressure, a pulser, a link, a flow) and what
 * the devices, the archive, the e-log and the alarm log show follows from the
 * physics — the beam lost at the moment of the trip and at one monitor,
 * temperatures with their lags, powers and efficiencies that match the beam,
 * a refill at the injector's rate with the shutters closed, a lifetime that
 * falls with the pressure once, a top-up that stalls only when the fill is
 * slower than the loss.
 */

import assert from "node:assert/strict";
import type { Simulator } from "../../../src/adapters/simulator/mod.ts";
import { type Incident, IncidentBook } from "../../../src/facility/incidents.ts";
import { DAY, HOUR, iso, simAt, T0 } from "./helpers.ts";

const MIN = 60_000;

type Kind = Incident["kind"];

/** The incidents of `kind` in the `days` before T0 (newest first). */
function incidents<K extends Kind>(
  sim: Simulator,
  kind: K,
  days: number,
): Extract<Incident, { kind: K }>[] {
  const out: Extract<Incident, { kind: K }>[] = [];
  const last = IncidentBook.shiftOf(T0 - 2 * HOUR);
  for (let k = last; k > last - 3 * days; k--) {
    for (const i of sim.model.book.plan(k).incidents) {
      if (i.kind === kind && i.end < T0 - HOUR) out.push(i as Extract<Incident, { kind: K }>);
    }
  }
  return out;
}

function state(sim: Simulator) {
  return (sim as unknown as { setpoints: Parameters<Simulator["model"]["value"]>[2] }).setpoints;
}

/** The noise-free value of a device at `t`, as the archive's physics gives it. */
function level(sim: Simulator, name: string, t: number): number {
  const def = sim.facility.byName.get(name);
  assert.ok(def, name);
  return sim.model.level(def, t, state(sim));
}

async function samples(sim: Simulator, name: string, from: number, to: number) {
  const [s] = await sim.archive({
    devices: [name],
    from: iso(from),
    to: iso(to),
    maxPoints: 100_000,
  });
  return s?.samples ?? [];
}

Deno.test("an RF trip loses the beam at the trip, at one monitor, and everything that needs beam follows", async () => {
  const { sim } = simAt();
  const trips = incidents(sim, "rf-trip", 10);
  assert.ok(trips.length >= 3, `${trips.length} trips in 10 days`);
  for (const trip of trips.slice(0, 3)) {
    const stn = `RF:STN:${String(trip.station).padStart(2, "0")}`;
    const at = `${trip.kind} of station ${trip.station} at ${iso(trip.t0)}`;
    // The RF interlock dumps the beam when the cavity field collapses: not a second later.
    assert.ok(level(sim, "RING:DCCT:CURRENT", trip.t0 - 1) > 250, at);
    assert.ok(level(sim, "RING:DCCT:CURRENT", trip.t0 + 2) < 0.05, at);
    const losses = sim.model.beam.losses(trip.t0 - 10_000, trip.t0 + 10_000, state(sim));
    assert.equal(losses.length, 1, `${at}: one loss`);
    const loss = losses[0];
    assert.ok(loss && Math.abs(loss.t - trip.t0) <= 1, `${at}: lost at ${loss && iso(loss.t)}`);
    assert.ok(loss.lostMA > 250 && loss.monitor, at);
    const burst = await samples(sim, loss.monitor, trip.t0, trip.t0 + 3000);
    assert.ok(
      Math.max(...burst.map((s) => Number(s.value))) > 2000,
      `${at}: the burst at ${loss.monitor}`,
    );
    // Without beam: no beam power, no ring losses, no injection.
    const t = trip.t0 + 30_000;
    assert.ok(level(sim, `${stn}:FWD:PWR`, t) < 2, `${at}: the tripped station's forward power`);
    const other = trip.station === 1 ? "RF:STN:02" : "RF:STN:01";
    const v = level(sim, `${other}:CAV:VOLT`, t);
    const wall = (v * v) / (2 * (sim.model.ring?.shuntImpedanceMOhm ?? 0) * 1000);
    assert.ok(
      Math.abs(level(sim, `${other}:FWD:PWR`, t) - wall) < 4,
      `${at}: the others' wall loss only`,
    );
    assert.ok(level(sim, "RING:BLM:050:LOSS", t) < 1, `${at}: no beam, no losses`);
    const [eff, intlk] = await sim.archive({
      devices: ["DIAG:INJ:EFF", "TIMING:INJ:INTLK"],
      from: iso(t),
      to: iso(t + 1000),
    });
    assert.equal(eff?.samples[0]?.severity, "INVALID", `${at}: no injection, no efficiency`);
    assert.equal(intlk?.samples[0]?.value, "RF_NOT_READY");
    // Temperatures fall with their thermal lags, not in a step.
    const fe = (u: number) => level(sim, "BL:05:FE:TEMP", u);
    assert.ok(
      Math.abs(fe(trip.t0 + 10_000) - fe(trip.t0 - 1000)) < 1,
      `${at}: no step at the front end`,
    );
    assert.ok(fe(trip.t0 - 1000) - fe(trip.t0 + 10 * MIN) > 5, `${at}: it cools over minutes`);
  }
});

Deno.test("after a trip the ring is refilled from zero at the injector's rate, with the front ends' shutters closed", async () => {
  const { sim } = simAt();
  for (const trip of incidents(sim, "rf-trip", 10).slice(0, 3)) {
    const at = `trip at ${iso(trip.t0)}`;
    assert.ok(
      level(sim, "RING:DCCT:CURRENT", trip.on - 1000) < 0.05,
      `${at}: no refill before the station is back`,
    );
    const t = trip.on + 60_000;
    const a = level(sim, "RING:DCCT:CURRENT", t);
    const b = level(sim, "RING:DCCT:CURRENT", t + 20_000);
    const c = sim.model.beam.conditions(t, state(sim));
    const expected = c.fillRateMAps - a / (c.lifetimeH(a) * 3600);
    assert.ok(
      Math.abs((b - a) / 20 - expected) < 0.03 * expected,
      `${at}: ${(b - a) / 20} vs ${expected} mA/s`,
    );
    const [shutter] = await sim.archive({
      devices: ["BL:07:SHUTTER"],
      from: iso(t),
      to: iso(t + 10_000),
    });
    assert.equal(
      shutter?.samples[0]?.value,
      "CLOSED",
      `${at}: refilled from low current with the shutters closed`,
    );
    // Once full, the shutters reopen and top-up resumes.
    let full = t;
    while (level(sim, "RING:DCCT:CURRENT", full) < 297 && full < trip.on + HOUR) full += 10_000;
    const [open] = await sim.archive({
      devices: ["BL:07:SHUTTER"],
      from: iso(full + 60_000),
      to: iso(full + 70_000),
    });
    assert.equal(open?.samples[0]?.value, "OPEN", at);
    // The e-log's "beam restored" time is when the archive's current was back.
    const entries = await sim.logs({
      source: "elog",
      from: iso(trip.t0),
      to: iso(trip.t0 + 2 * HOUR),
      text: "Beam restored",
    });
    const m = / (\d\d):(\d\d) UTC, shutters reopened/.exec(entries[0]?.text ?? "");
    assert.ok(m, `${at}: ${entries[0]?.text}`);
    const said = Math.floor(full / DAY) * DAY + (Number(m[1]) * 60 + Number(m[2])) * MIN;
    assert.ok(
      Math.abs(said - full) < 2 * MIN,
      `${at}: e-log ${m[1]}:${m[2]}, archive ${iso(full)}`,
    );
  }
});

Deno.test("a trip's alarms are in the alarm log: the reflected power first, then the station, the beam, the power", async () => {
  const { sim } = simAt();
  const trip = incidents(sim, "rf-trip", 10).find((i) => i.cause === "REFL_PWR");
  assert.ok(trip);
  const stn = `RF:STN:${String(trip.station).padStart(2, "0")}`;
  const alarms = await sim.logs({
    source: "alarm",
    from: iso(trip.t0 - 10 * MIN),
    to: iso(trip.t0 + 5 * MIN),
    limit: 1000,
  });
  const when = (title: string) => alarms.find((e) => e.title === title);
  for (
    const title of [
      `${stn}:REFL:PWR HIHI`,
      `${stn}:STATUS STATE`,
      `${stn}:FWD:PWR LOLO`,
      "RING:DCCT:CURRENT LOLO",
    ]
  ) {
    assert.ok(when(title), `${title} in ${alarms.map((e) => e.title).join(", ")}`);
  }
  assert.ok(Date.parse(when(`${stn}:REFL:PWR HIHI`)?.time ?? "") < trip.t0, "the cause first");
  assert.ok(
    Math.abs(Date.parse(when("RING:DCCT:CURRENT LOLO")?.time ?? "") - trip.t0) < 1000,
    "the beam at once",
  );
});

Deno.test("a vacuum burst lowers the lifetime once, through the pressure, and raises the losses where the gas is", () => {
  const { sim } = simAt();
  const bursts = incidents(sim, "vacuum-burst", 30);
  assert.ok(bursts.length >= 3, `${bursts.length} bursts in 30 days`);
  const ring = sim.model.ring;
  assert.ok(ring);
  for (const burst of bursts.slice(0, 3)) {
    // Nothing but the gauges and pumps is scripted: the lifetime and losses follow from them.
    const scripted = new Set(burst.effects.map((e) => e.device));
    assert.ok([...scripted].every((d) => d.startsWith("RING:VAC:")), [...scripted].join(", "));
    const before = burst.t0 - 60_000;
    const during = burst.t0 + 30_000;
    const gauges = Array.from(
      { length: 60 },
      (_, i) => `RING:VAC:IG:${String(i + 1).padStart(2, "0")}:PRES`,
    );
    const mean = (t: number) => gauges.reduce((s, g) => s + level(sim, g, t), 0) / gauges.length;
    const reference = sim.model.beam.pressureReference;
    // 1/τ rises by the gas-scattering rate of the added gas: (ΔP/P₀)/τ_gas (Touschek: same current).
    const rise = 1 / level(sim, "RING:LIFETIME", during) - 1 / level(sim, "RING:LIFETIME", before);
    // Elastic scattering also scales with the transverse acceptance the orbit leaves.
    const accepted = sim.model.beam.conditions(during, state(sim)).acceptanceRatio;
    const elastic = ring.elasticGasFraction / accepted + (1 - ring.elasticGasFraction);
    const gas = ((mean(during) - mean(before)) / reference / ring.gasLifetimeH) * elastic;
    const touschek = sim.model.beam.lifetime(during, state(sim)).touschekH;
    const touschekBefore = sim.model.beam.lifetime(before, state(sim)).touschekH;
    const expected = gas + 1 / touschek - 1 / touschekBefore;
    assert.ok(
      Math.abs(rise - expected) < 0.05 * expected,
      `1/τ rose by ${rise} /h, the gas gives ${expected}`,
    );
    // The monitors of the burst's cell see the gas; the far side of the ring does not.
    const cell = burst.cell;
    const near = `RING:BLM:${String(cell * 6 - 3).padStart(3, "0")}:LOSS`;
    const far = `RING:BLM:${String(((cell + 9) % 20) * 6 + 3).padStart(3, "0")}:LOSS`;
    const ratio = (name: string) => level(sim, name, during) / level(sim, name, before);
    assert.ok(ratio(near) > 1.5 * ratio(far), `${near} ×${ratio(near)}, ${far} ×${ratio(far)}`);
  }
});

Deno.test("injection trouble stalls top-up only when the fill is slower than the loss, and the e-log says which", async () => {
  const { sim } = simAt();
  // Those without an RF trip in the same hours: a trip's loss and refill are another story.
  const trips = incidents(sim, "rf-trip", 61);
  const found = incidents(sim, "injection", 60).filter((i) =>
    !trips.some((t) => t.start < i.end + HOUR && t.end > i.start - HOUR)
  );
  assert.ok(found.length >= 4, `${found.length} in 60 days`);
  let stalled = 0;
  for (const i of found) {
    const t = i.t0 + MIN;
    const c = sim.model.beam.conditions(t, state(sim));
    const current = level(sim, "RING:DCCT:CURRENT", t);
    const loss = current / (c.lifetimeH(current) * 3600);
    const [entry] = (await sim.logs({
      source: "elog",
      from: iso(i.t0),
      to: iso(i.t0 + 20 * MIN),
      text: "Injection problem",
    })).filter((e) => e.title.startsWith("Injection problem"));
    assert.ok(entry, `an entry about the ${i.cause} trouble at ${iso(i.t0)}`);
    const drop = level(sim, "RING:DCCT:CURRENT", i.t0 - 1000) -
      level(sim, "RING:DCCT:CURRENT", i.t1 - 1000);
    if (c.fillRateMAps < loss) {
      stalled++;
      assert.match(entry.title, /stalled/, `${iso(i.t0)}: ${entry.text}`);
      const expected = (loss - c.fillRateMAps) * ((i.t1 - i.t0) / 1000);
      assert.ok(
        Math.abs(drop - expected) < 0.2 * expected + 1,
        `${iso(i.t0)}: the current decays by ${drop} mA, (loss − fill)·t gives ${expected}`,
      );
    } else {
      assert.match(entry.title, /slowed/, `${iso(i.t0)}: ${entry.text}`);
      assert.ok(drop < 1.5, `${iso(i.t0)}: top-up holds the current (lost ${drop} mA)`);
    }
  }
  assert.ok(
    stalled > 0 && stalled < found.length,
    `${stalled} of ${found.length} stalled: both kinds occur`,
  );
});

Deno.test("less cooling flow raises the return temperature as ΔT·F₀/F, through the water's lag", () => {
  const { sim } = simAt();
  const [event] = incidents(sim, "cooling", 90);
  assert.ok(event, "a cooling incident in 90 days");
  const loop = `CW:LOOP:${String(event.loop).padStart(2, "0")}`;
  const t = event.t0 + 40 * MIN;
  const sup = level(sim, `${loop}:TEMP:SUP`, t);
  const flowDef = sim.facility.byName.get(`${loop}:FLOW`);
  assert.ok(flowDef);
  const f0 = sim.model.baseLevel(flowDef, t, state(sim));
  const f = level(sim, `${loop}:FLOW`, t);
  const ret0 = level(sim, `${loop}:TEMP:RET`, event.t0 - MIN);
  const dT0 = ret0 - level(sim, `${loop}:TEMP:SUP`, event.t0 - MIN);
  const ret = level(sim, `${loop}:TEMP:RET`, t);
  // 40 minutes is eight time constants of the 5-minute lag: settled at ΔT₀·F₀/F.
  assert.ok(Math.abs(ret - sup - (dT0 * f0) / f) < 0.3, `${ret - sup} K vs ${(dT0 * f0) / f}`);
  const early = level(sim, `${loop}:TEMP:RET`, event.t0 + 30_000);
  assert.ok(early - ret0 < 0.3 * (ret - ret0), "half a minute in, the water has not warmed yet");
});
