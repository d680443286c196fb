/**
 * What the crews and experts write about incidents: one to three e-log
 * drafts per incident, with numbers read from the physics so the text
 * matches the archive and the alarm log.
 *
 * @module
 */

import { formatValue } from "./alarms.ts";
import { HOUR_MS, type Incident, IncidentBook, type ShiftPlan } from "./incidents.ts";
import type { Rng } from "./noise.ts";

export type Level = "Info" | "Warning" | "Problem";
export const MIN_MS = 60_000;

/** An e-log entry before it gets its id. */
export interface Draft {
  t: number;
  title: string;
  text: string;
  author: string;
  logbook: string;
  devices: string[];
  level: Level;
}

/** What the narratives need from the log writer. */
export interface Narrator {
  readonly book: IncidentBook;
  /** Noise-free value of a numeric device at time `t` (0 otherwise). */
  v(name: string, t: number): number;
  /** Noise-free value of any device at `t` (a state's label). */
  state(name: string, t: number): string;
  /** The first time from `t` on that the ring is full again (top-up target), within a shift. */
  refilledAfter(t: number): number;
  /** What injection would add (mA/s) and what the beam loses (mA/s) at `t`. */
  fillRate(t: number): number;
  lossRate(t: number): number;
  /** Someone from `group` (a key of the facility's people). */
  expert(rng: Rng, group: string, plan: ShiftPlan): string;
}

export const pad = (n: number, width = 2): string => String(n).padStart(width, "0");
export const hm = (t: number): string => new Date(t).toISOString().slice(11, 16);
const hms = (t: number) => new Date(t).toISOString().slice(11, 19);

/**
 * A short description for handovers and summaries, as known at time `asOf`:
 * an incident still running then is reported as ongoing.
 */
export function phrase(n: Narrator, i: Incident, asOf: number): string {
  const ongoing = i.end > asOf;
  switch (i.kind) {
    case "rf-trip": {
      const refilled = n.refilledAfter(i.on);
      return `RF${i.station} tripped at ${hm(i.t0)} UTC (${i.cause}), ${
        refilled > asOf ? "recovery in progress" : `beam back at ${hm(refilled)}`
      }`;
    }
    case "vacuum-burst":
      return `pressure burst in ring cell ${pad(i.cell)} at ${hm(i.t0)} UTC, ${
        ongoing ? "pumping down" : "recovered"
      }`;
    case "injection":
      return i.t1 > asOf
        ? `injection problem since ${hm(i.t0)} UTC (${i.cause}), ongoing`
        : `injection problem ${hm(i.t0)}–${hm(i.t1)} UTC (${i.cause})`;
    case "cooling":
      return i.t1 > asOf
        ? `low flow on CW loop ${pad(i.loop)} since ${hm(i.t0)} UTC, ongoing`
        : `low flow on CW loop ${pad(i.loop)} ${hm(i.t0)}–${hm(i.t1)} UTC`;
    case "ps-overtemp":
      return `${i.device} power supply over-temperature, ${
        i.t1 > asOf ? "repair in progress" : `fixed at ${hm(i.t1)} UTC`
      }`;
  }
}

/** The e-log drafts about one incident, in the order they were written. */
export function incidentDrafts(n: Narrator, i: Incident, plan: ShiftPlan, rng: Rng): Draft[] {
  const operator = rng.pick([plan.crew.lead, plan.crew.operator]);
  const at = (t: number, min: number, max: number) => Math.round(t + rng.range(min, max) * MIN_MS);
  switch (i.kind) {
    case "rf-trip":
      return rfTrip(n, i, operator, n.expert(rng, "RF", plan), at);
    case "vacuum-burst": {
      const tau = i.effects.find((e) => e.device === i.gauge && e.kind === "spike");
      const first = pad(i.cell * 6 - 5, 3);
      const last = pad(i.cell * 6, 3);
      return [{
        t: at(i.t0, 4, 12),
        title: `Pressure burst in ring cell ${pad(i.cell)}`,
        text: `${i.gauge} jumped to ${formatValue(n.v(i.gauge, i.t0))} mbar at ${
          hms(i.t0)
        } UTC and relaxed with a ${
          Math.round((tau && tau.kind === "spike" ? tau.tauMs : 0) / MIN_MS)
        } min time constant; the other gauges and ion pumps of the cell followed. Lifetime dipped to ${
          minimum(n, "RING:LIFETIME", i.t0, i.t0 + 2 * MIN_MS).toFixed(1)
        } h and losses rose on RING:BLM:${first}..${last}. Pressure came back down, so no leak: desorption, keep watching.`,
        author: rng.chance(0.5) ? n.expert(rng, "Vacuum", plan) : operator,
        logbook: "Vacuum",
        devices: [i.gauge, "RING:LIFETIME"],
        level: i.factor > 330 ? "Problem" : "Warning",
      }];
    }
    case "injection":
      return injection(n, i, operator, n.expert(rng, "Injector", plan), at);
    case "cooling": {
      const loop = `CW:LOOP:${pad(i.loop)}`;
      return [{
        t: at(i.t0, 5, 15),
        title: `Low flow alarm on cooling loop ${pad(i.loop)}`,
        text: `${loop}:FLOW down to ${
          n.v(`${loop}:FLOW`, i.t0 + MIN_MS).toFixed(0)
        } l/min (LOW 380, LOLO 300); return temperature rising. Called the cooling on-call.`,
        author: operator,
        logbook: "Operations",
        devices: [`${loop}:FLOW`, `${loop}:TEMP:RET`],
        level: "Warning",
      }, {
        t: at(i.t1, 2, 8),
        title: `Cooling loop ${pad(i.loop)} flow restored`,
        text: `Cause: ${i.cause}. Fixed at ${hm(i.t1)} UTC; ${loop}:TEMP:RET peaked at ${
          maximum(n, `${loop}:TEMP:RET`, i.t0, i.t1 + 15 * MIN_MS).toFixed(1)
        } degC and is coming back to normal.`,
        author: n.expert(rng, "Cooling", plan),
        logbook: "Cooling",
        devices: [`${loop}:FLOW`, `${loop}:TEMP:RET`],
        level: "Info",
      }];
    }
    case "ps-overtemp": {
      const temp = `${i.device}:PS:TEMP`;
      const t = at(i.t0, 15, 30);
      return [{
        t,
        title: `${i.device} power supply temperature high`,
        text: `${temp} at ${
          n.v(temp, t).toFixed(1)
        } degC (HIGH 45); the supply is still regulating. Informed the magnet group.`,
        author: operator,
        logbook: "Operations",
        devices: [temp, `${i.device}:SETPT`],
        level: "Warning",
      }, {
        t: at(i.t1, 2, 10),
        title: `${i.device} power supply cabinet repaired`,
        text: `Cause: ${i.cause}. Fixed at ${hm(i.t1)} UTC; ${temp} peaked at ${
          n.v(temp, i.t1 - 1).toFixed(1)
        } degC and is back to normal.`,
        author: n.expert(rng, "Magnets", plan),
        logbook: "Magnets",
        devices: [temp],
        level: "Info",
      }];
    }
  }
}

function rfTrip(
  n: Narrator,
  i: Incident & { kind: "rf-trip" },
  operator: string,
  expert: string,
  at: (t: number, min: number, max: number) => number,
): Draft[] {
  const stn = `RF:STN:${pad(i.station)}`;
  const before = i.t0 - 1;
  const rise = i.effects.find((e) => e.kind === "rise");
  const cause = {
    REFL_PWR:
      `on the reflected-power interlock (${stn}:INTLK = REFL_PWR). ${stn}:REFL:PWR had been climbing for about ${
        Math.round((i.t0 - (rise?.from ?? i.t0)) / MIN_MS)
      } min and reached ${
        n.v(`${stn}:REFL:PWR`, before).toFixed(1)
      } kW (HIHI 25 kW) just before the trip`,
    ARC:
      `on the arc detector (${stn}:INTLK = ARC), with a reflected-power spike and a pressure burst on ${stn}:VAC:PRES`,
    WATER: `on low cooling-water flow (${stn}:INTLK = WATER): ${stn}:WATER:FLOW had dropped to ${
      n.v(`${stn}:WATER:FLOW`, before).toFixed(0)
    } l/min (LOLO 80)`,
    KLYSTRON: `on a klystron fault (${stn}:INTLK = KLYSTRON); ${stn}:KLY:HV dropped to zero`,
    VACUUM: `on the cavity vacuum interlock (${stn}:INTLK = VACUUM): ${stn}:VAC:PRES reached ${
      formatValue(n.v(`${stn}:VAC:PRES`, i.t0))
    } mbar`,
  }[i.cause];
  const diagnosis = {
    REFL_PWR: `No arc logged; circulator load ${stn}:CIRC:TEMP peaked at ${
      n.v(`${stn}:CIRC:TEMP`, before).toFixed(1)
    } degC. Reflected power creeps up when the klystron gallery cools down at night: suspect the circulator temperature compensation or the tuner loop. Will inspect the circulator at the next access.`,
    ARC:
      "Arc detector fired on the waveguide window side; checked the detector and window vacuum, no damage found.",
    WATER:
      "Flow switch on the klystron collector circuit; flushed the filter, flow back to normal.",
    KLYSTRON: "Modulator crowbar fired; HV waveforms look normal, no repeat so far.",
    VACUUM: "Pressure burst in the cavity; the ion pumps recovered it within minutes.",
  }[i.cause];
  const count = countTrips(n, i);
  const repeat = count > 1
    ? ` ${ordinal(count)} ${i.cause} trip of station ${i.station} in the last 7 days.`
    : "";
  const refilled = n.refilledAfter(i.on);
  const volts = n.v(`${stn}:CAV:VOLT`, refilled);
  const current = n.v("RING:DCCT:CURRENT", refilled);
  return [{
    t: at(i.t0, 2, 6),
    title: i.cause === "REFL_PWR"
      ? `RF station ${i.station} tripped on reflected power, beam lost`
      : `RF station ${i.station} trip (${i.cause}), beam lost`,
    text: `${stn} tripped at ${
      hms(i.t0)
    } UTC ${cause}. Cavity voltage collapsed and the beam was lost from ${
      n.v("RING:DCCT:CURRENT", before).toFixed(1)
    } mA. Called the RF on-call (${expert}).${repeat}`,
    author: operator,
    logbook: "Operations",
    devices: keyDevices(i),
    level: "Problem",
  }, {
    // Written once the station is back up: it reports when that was.
    t: at(i.on, 1, 3),
    title: `RF${i.station} reset after ${i.cause} trip`,
    text: `Reset ${stn}:INTLK at ${hm(i.reset)} UTC. ${diagnosis} Station reconditioned to ${
      volts.toFixed(0)
    } kV by ${hm(i.on)}.${repeat}`,
    author: expert,
    logbook: "RF",
    devices: keyDevices(i),
    level: "Warning",
  }, {
    t: at(refilled, 1, 4),
    title: `Beam restored after RF${i.station} trip`,
    text: `Refilled from zero with the front-end shutters closed once ${stn} was back ON at ${
      hm(i.on)
    } UTC; ${current.toFixed(1)} mA at ${
      hm(refilled)
    } UTC, shutters reopened, top-up resumed. Beam downtime ${
      Math.round((refilled - i.t0) / MIN_MS)
    } min (${hm(i.t0)}–${hm(refilled)}).`,
    author: operator,
    logbook: "Operations",
    devices: ["RING:DCCT:CURRENT", `${stn}:STATUS`],
    level: "Info",
  }];
}

/** Trips of the same station and cause in the seven days up to this one. */
function countTrips(n: Narrator, trip: Incident & { kind: "rf-trip" }): number {
  const k = IncidentBook.shiftOf(trip.t0);
  let count = 0;
  for (let kk = k - 21; kk <= k; kk++) {
    for (const i of n.book.plan(kk).incidents) {
      if (i.kind !== "rf-trip" || i.station !== trip.station || i.cause !== trip.cause) continue;
      if (i.t0 <= trip.t0 && i.t0 > trip.t0 - 7 * 24 * HOUR_MS) count++;
    }
  }
  return count;
}

function injection(
  n: Narrator,
  i: Incident & { kind: "injection" },
  operator: string,
  expert: string,
  at: (t: number, min: number, max: number) => number,
): Draft[] {
  const seen = i.t0 + MIN_MS;
  const fill = n.fillRate(seen);
  const loss = n.lossRate(seen);
  const eff = n.v("DIAG:INJ:EFF", seen);
  const recovered = n.v("DIAG:INJ:EFF", i.t1 + 5 * MIN_MS).toFixed(0);
  const stalled = fill < loss;
  const symptom = {
    kicker: `DIAG:INJ:EFF dropped to ${eff.toFixed(0)}% at ${hm(i.t0)} UTC`,
    gun: `LINAC:GUN:CHARGE fell to ${n.v("LINAC:GUN:CHARGE", seen).toFixed(3)} nC at ${
      hm(i.t0)
    } UTC (injection efficiency unchanged at ${eff.toFixed(0)}%)`,
    timing: `${i.device} lost its link at ${
      hm(i.t0)
    } UTC: no injection triggers (TIMING:INJ:INTLK ${n.state("TIMING:INJ:INTLK", seen)})`,
    septum: `BTS:SEPTUM:STATUS went to FAULT at ${hm(i.t0)} UTC: nothing is captured`,
  }[i.cause];
  const consequence = stalled
    ? `top-up cannot keep up (${(fill * 3600).toFixed(1)} mA/h in against ${
      (loss * 3600).toFixed(1)
    } mA/h lost) and the stored current is decaying`
    : `top-up still keeps the current (${(fill * 3600).toFixed(0)} mA/h in against ${
      (loss * 3600).toFixed(1)
    } mA/h lost), refills take longer`;
  const fix = {
    kicker: `${i.device} had sagged ${
      (n.v(i.device, i.t1 - 1) - n.v(i.device.replace(":RDBK", ":SETPT"), i.t1 - 1))
        .toFixed(2)
    } kV below its setpoint (pulser charging supply). Reset the pulser`,
    gun: `The gun bunch charge LINAC:GUN:CHARGE had fallen to ${
      n.v(i.device, i.t1 - 1).toFixed(3)
    } nC (cathode heater regulation). Re-tuned heater and grid bias`,
    timing: `${i.device} lost its link at ${
      hm(i.t0)
    } UTC and injection triggers went missing. Re-seated the fibre`,
    septum: `BTS:SEPTUM:STATUS went to FAULT at ${
      hm(i.t0)
    } UTC, no injection at all. Pulser reset by the injector on-call`,
  }[i.cause];
  const lost = n.v("RING:DCCT:CURRENT", i.t0 - 1) - n.v("RING:DCCT:CURRENT", i.t1 - 1);
  return [{
    t: at(i.t0, 5, 12),
    title: stalled ? "Injection problem, top-up stalled" : "Injection problem, top-up slowed",
    text: `${symptom}; ${consequence}. Investigating.`,
    author: operator,
    logbook: "Operations",
    devices: [i.device, "DIAG:INJ:EFF", "RING:DCCT:CURRENT"],
    level: stalled ? "Problem" : "Warning",
  }, {
    t: at(i.t1, 1, 5),
    title: `Injection recovered (${i.cause})`,
    text: `${fix} at ${hm(i.t1)} UTC; injection efficiency ${recovered}%, ${
      lost > 0.5 ? `current lost ${lost.toFixed(1)} mA in the meantime` : "the current was held"
    }.`,
    author: expert,
    logbook: "Injector",
    devices: [i.device, "DIAG:INJ:EFF"],
    level: "Info",
  }];
}

/** The smallest value of a device over [from, to], on a one-second grid. */
function minimum(n: Narrator, name: string, from: number, to: number): number {
  let m = Infinity;
  for (let t = from; t <= to; t += 1000) m = Math.min(m, n.v(name, t));
  return m;
}

/** The largest value of a device over [from, to], on a ten-second grid (a temperature). */
function maximum(n: Narrator, name: string, from: number, to: number): number {
  let m = -Infinity;
  for (let t = from; t <= to; t += 10_000) m = Math.max(m, n.v(name, t));
  return m;
}

/** The devices an entry about this incident mentions. */
export function keyDevices(i: Incident): string[] {
  switch (i.kind) {
    case "rf-trip": {
      const stn = `RF:STN:${pad(i.station)}`;
      return [
        `${stn}:INTLK`,
        `${stn}:STATUS`,
        `${stn}:REFL:PWR`,
        `${stn}:CAV:VOLT`,
        "RING:DCCT:CURRENT",
      ];
    }
    case "vacuum-burst":
      return [i.gauge];
    case "injection":
      return [i.device, "DIAG:INJ:EFF"];
    case "cooling":
      return [`CW:LOOP:${pad(i.loop)}:FLOW`];
    case "ps-overtemp":
      return [`${i.device}:PS:TEMP`];
  }
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : ["th", "st", "nd", "rd"][n % 10] ?? "th";
  return `${n}${suffix}`;
}
