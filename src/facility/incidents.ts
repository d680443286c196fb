/**
 * The facility's history: for each eight-hour shift, a crew, a mode and a
 * few incidents, generated from (seed, shift number) alone so any time range
 * — past or future — can be replayed without storing anything. An incident
 * is a cause: its {@link Effect}s change the machine's inputs (a cavity's
 * field and its interlock, a gauge's pressure, a pulser's output, a gun's
 * charge, a timing link, a cooling flow) and the physics works out what
 * follows (the beam, its lifetime and losses, powers, temperatures, the
 * injection). The e-log and alarm log narrate what the physics gives.
 *
 * @module
 */

import { type Effect, effectActive, effectEnd, type Happening } from "./effects.ts";
import { hashNumbers, Rng } from "./noise.ts";
import { type RoutineAction, routineActions } from "./routine.ts";

/** One hour in milliseconds. */
export const HOUR_MS = 3_600_000;
const MIN_MS = 60_000;
/** Shifts start at 00:00, 08:00 and 16:00 UTC. */
export const SHIFT_MS = 8 * HOUR_MS;
/** Shift names by shift number modulo 3. */
export const SHIFT_NAMES = ["Owl", "Day", "Swing"] as const;

/** Station 3's reflected-power trouble mostly shows at night (owl, day, swing). */
const RF3_TRIP_CHANCE = [0.7, 0.05, 0.35];
const PLAN_CACHE_SIZE = 2048;

/** RF interlock causes, as shown by `RF:STN:nn:INTLK`. */
export type RfCause = "REFL_PWR" | "ARC" | "WATER" | "KLYSTRON" | "VACUUM";
/** What broke when injection fails. */
export type InjectionCause = "kicker" | "gun" | "timing" | "septum";

/** One incident, with the facts the logs narrate. */
export type Incident =
  & Happening
  & (
    | {
      kind: "rf-trip";
      station: number;
      cause: RfCause;
      t0: number;
      reset: number;
      on: number;
    }
    | { kind: "vacuum-burst"; cell: number; gauge: string; factor: number; t0: number }
    | { kind: "injection"; cause: InjectionCause; device: string; t0: number; t1: number }
    | { kind: "cooling"; loop: number; cause: string; t0: number; t1: number }
    | { kind: "ps-overtemp"; device: string; cause: string; t0: number; t1: number }
  );

/** The operators on shift. */
export interface Crew {
  readonly id: string;
  readonly lead: string;
  readonly operator: string;
}

/** Everything that happens in one shift. */
export interface ShiftPlan {
  readonly k: number;
  readonly start: number;
  readonly end: number;
  readonly name: (typeof SHIFT_NAMES)[number];
  readonly crew: Crew;
  readonly mode: "USER" | "MD";
  /** Sorted by start. */
  readonly incidents: readonly Incident[];
  /** The crews' routine work (orbit corrections, injection tuning, RF phase scans), by time. */
  readonly routine: readonly RoutineAction[];
  readonly byDevice: ReadonlyMap<string, readonly Effect[]>;
}

const NONE: readonly Effect[] = [];

/** What a change of the stored beam moves: current, lifetime, injection, RF powers, ring losses. */
export const BEAM_WATCH: readonly string[] = [
  "RING:DCCT:CURRENT",
  "RING:LIFETIME",
  "DIAG:INJ:EFF",
  "TIMING:INJ:INTLK",
  ...[1, 2, 3, 4].map((n) => `RF:STN:${String(n).padStart(2, "0")}:FWD:PWR`),
  ...Array.from({ length: 120 }, (_, i) => `RING:BLM:${String(i + 1).padStart(3, "0")}:LOSS`),
  ...Array.from({ length: 24 }, (_, i) => `BL:${String(i + 1).padStart(2, "0")}:FE:TEMP`),
];

/** Shift plans for one seed, generated on demand and cached. */
export class IncidentBook {
  private readonly cache = new Map<number, ShiftPlan>();

  /** `quiet`: a span (epoch ms) no incident overlaps (routine work goes on). */
  constructor(
    private readonly seed: number,
    private readonly operators: readonly string[],
    private readonly quiet?: { readonly from: number; readonly to: number },
  ) {}

  /** The shift containing time `t`. */
  static shiftOf(t: number): number {
    return Math.floor(t / SHIFT_MS);
  }

  plan(k: number): ShiftPlan {
    let plan = this.cache.get(k);
    if (plan === undefined) {
      plan = generate(this.seed, k, this.operators, this.quiet);
      if (this.cache.size >= PLAN_CACHE_SIZE) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      this.cache.set(k, plan);
    }
    return plan;
  }

  /** The routine actions of shift `k`. */
  routine(k: number): readonly RoutineAction[] {
    return this.plan(k).routine;
  }

  /** Effects on `device` at time `t`, oldest incident first. */
  effectsAt(device: string, t: number): readonly Effect[] {
    const k = IncidentBook.shiftOf(t);
    let out: Effect[] | undefined;
    // Incidents last less than a shift, so only this shift and the one before matter.
    for (const kk of [k - 1, k]) {
      const list = this.plan(kk).byDevice.get(device);
      if (list === undefined) continue;
      for (const effect of list) if (effectActive(effect, t)) (out ??= []).push(effect);
    }
    return out ?? NONE;
  }
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

function generate(
  seed: number,
  k: number,
  operators: readonly string[],
  quiet?: { readonly from: number; readonly to: number },
): ShiftPlan {
  const rng = new Rng(hashNumbers(seed, k, 0x5817));
  const start = k * SHIFT_MS;
  const type = mod(k, 3);
  const incidents: Incident[] = [];
  let n = 0;
  const nextId = () => `${k}.${n++}`;
  const at = (fromH: number, toH: number) => Math.round(start + rng.range(fromH, toH) * HOUR_MS);

  let t = at(0.4, 3.5);
  for (
    let trip = 0;
    trip < 2 && rng.chance(trip === 0 ? RF3_TRIP_CHANCE[type] ?? 0 : 0.2);
    trip++
  ) {
    const incident = rfTrip(rng, nextId(), 3, rng.chance(0.85) ? "REFL_PWR" : "ARC", t);
    incidents.push(incident);
    t = Math.round(incident.end + rng.range(0.5, 2) * HOUR_MS);
    if (t > start + 7 * HOUR_MS) break;
  }
  for (const station of [1, 2, 4]) {
    if (!rng.chance(0.03)) continue;
    const cause = rng.pick(["ARC", "WATER", "KLYSTRON", "VACUUM"] as const);
    incidents.push(rfTrip(rng, nextId(), station, cause, at(0.3, 7)));
  }
  if (rng.chance(0.2)) incidents.push(vacuumBurst(rng, nextId(), at(0.3, 7)));
  if (rng.chance(0.15)) incidents.push(injection(rng, nextId(), at(0.3, 7)));
  if (rng.chance(0.06)) incidents.push(cooling(rng, nextId(), at(0.3, 6)));
  if (rng.chance(0.06)) incidents.push(psOvertemp(rng, nextId(), at(0.3, 7)));
  incidents.sort((a, b) => a.start - b.start);
  if (quiet !== undefined) {
    for (let i = incidents.length - 1; i >= 0; i--) {
      const x = incidents[i] as Incident;
      if (x.start < quiet.to && x.end > quiet.from) incidents.splice(i, 1);
    }
  }

  const routine = routineActions(seed, k, start);
  const byDevice = new Map<string, Effect[]>();
  for (const incident of [...incidents, ...routine]) {
    for (const effect of incident.effects) {
      const list = byDevice.get(effect.device);
      if (list === undefined) byDevice.set(effect.device, [effect]);
      else list.push(effect);
    }
  }
  // Five crews, each working the same shift type for two days running.
  const crewIndex = mod(Math.floor(k / 6) + type * 2, 5);
  const dayOfWeek = mod(Math.floor(k / 3) + 4, 7); // 1970-01-01 was a Thursday
  return {
    k,
    start,
    end: start + SHIFT_MS,
    name: SHIFT_NAMES[type] ?? "Owl",
    crew: {
      id: "ABCDE"[crewIndex] ?? "A",
      lead: operators[crewIndex * 2] ?? "Operator",
      operator: operators[crewIndex * 2 + 1] ?? "Operator",
    },
    mode: dayOfWeek === 2 && type === 1 ? "MD" : "USER",
    incidents,
    routine,
    byDevice,
  };
}

/** An incident before its overall window is known. */
type Unfinished = {
  [K in Incident["kind"]]: Omit<Extract<Incident, { kind: K }>, "start" | "end">;
}[Incident["kind"]];

function finish(incident: Unfinished): Incident {
  const start = Math.min(...incident.effects.map((e) => e.from));
  const end = Math.max(...incident.effects.map(effectEnd));
  return { ...incident, start, end };
}

function rfTrip(rng: Rng, id: string, station: number, cause: RfCause, t0: number): Incident {
  const stn = `RF:STN:${pad(station)}`;
  const reset = Math.round(t0 + rng.range(8, 25) * MIN_MS);
  const on = Math.round(reset + rng.range(2, 5) * MIN_MS);
  const effects: Effect[] = [];
  if (cause === "REFL_PWR") {
    const from = Math.round(t0 - rng.range(2, 7) * MIN_MS);
    effects.push({
      kind: "rise",
      device: `${stn}:REFL:PWR`,
      from,
      to: t0,
      peak: rng.range(26, 40),
    });
  } else if (cause === "ARC") {
    effects.push({ kind: "rise", device: `${stn}:REFL:PWR`, from: t0 - 1500, to: t0, peak: 60 });
    effects.push({ kind: "spike", device: `${stn}:VAC:PRES`, from: t0, factor: 30, tauMs: MIN_MS });
  } else if (cause === "WATER") {
    const from = t0 - 4 * MIN_MS;
    effects.push({
      kind: "scale",
      device: `${stn}:WATER:FLOW`,
      from,
      to: reset,
      level: 0.5,
      recoverMs: MIN_MS,
    });
  } else if (cause === "KLYSTRON") {
    effects.push({
      kind: "scale",
      device: `${stn}:KLY:HV`,
      from: t0,
      to: reset,
      level: 0,
      recoverMs: MIN_MS,
    });
  } else {
    effects.push({
      kind: "spike",
      device: `${stn}:VAC:PRES`,
      from: t0 - 3000,
      factor: 800,
      tauMs: 90_000,
    });
  }
  // The interlock drops the drive: the field collapses and the RF interlock dumps the beam.
  effects.push(
    {
      kind: "scale",
      device: `${stn}:CAV:VOLT`,
      from: t0,
      to: reset,
      level: 0,
      recoverMs: on - reset,
    },
    { kind: "label", device: `${stn}:STATUS`, from: t0, to: reset, label: "TRIPPED" },
    { kind: "label", device: `${stn}:STATUS`, from: reset, to: on, label: "CONDITIONING" },
    { kind: "label", device: `${stn}:INTLK`, from: t0, to: reset, label: cause },
  );
  const watch = [
    `${stn}:FWD:PWR`,
    `${stn}:REFL:PWR`,
    `${stn}:CIRC:TEMP`,
    `${stn}:CAV:TEMP`,
    `${stn}:KLY:CURRENT`,
    ...BEAM_WATCH,
  ];
  return finish({ kind: "rf-trip", id, station, cause, t0, reset, on, effects, watch });
}

function vacuumBurst(rng: Rng, id: string, t0: number): Incident {
  const cell = rng.int(1, 20);
  const factor = rng.range(40, 600);
  const tauMs = rng.range(2, 12) * MIN_MS;
  const gauges = [0, 1, 2].map((i) => `RING:VAC:IG:${pad(cell * 3 - 2 + i)}:PRES`);
  const gauge = rng.pick(gauges);
  const effects: Effect[] = gauges.map((device) => ({
    kind: "spike" as const,
    device,
    from: t0,
    factor: device === gauge ? factor : 1 + factor / 6,
    tauMs,
  }));
  // The gas is the cause: the lifetime and the losses of the cell follow from the pressure.
  const watch: string[] = [...BEAM_WATCH];
  for (let i = 0; i < 6; i++) {
    const n = pad(cell * 6 - 5 + i, 3);
    effects.push({
      kind: "spike",
      device: `RING:VAC:IP:${n}:PRES`,
      from: t0,
      factor: 1 + factor / 4,
      tauMs,
    });
    watch.push(`RING:VAC:IP:${n}:CURRENT`);
  }
  return finish({ kind: "vacuum-burst", id, cell, gauge, factor, t0, effects, watch });
}

function injection(rng: Rng, id: string, t0: number): Incident {
  const cause = rng.pick(["kicker", "gun", "timing", "septum"] as const);
  const t1 = Math.round(t0 + rng.range(20, 90) * MIN_MS);
  const effects: Effect[] = [];
  let device: string;
  if (cause === "kicker") {
    // The pulser's charging supply sags: the kick the beam gets is what the readback reads.
    device = `BTS:KICKER:${pad(rng.int(1, 4))}:VOLT:RDBK`;
    const delta = -rng.range(0.5, 3);
    effects.push({ kind: "add", device, from: t0 - MIN_MS, to: t1, delta, rampMs: 30_000 });
  } else if (cause === "gun") {
    // The cathode heater's regulation fails: the bunch charge, hence the fill rate, collapses.
    device = "LINAC:GUN:CHARGE";
    const level = 10 ** -rng.range(0.3, 2.5);
    effects.push({ kind: "scale", device, from: t0, to: t1, level, recoverMs: 2 * MIN_MS });
  } else if (cause === "timing") {
    // An injector event receiver loses its link: no injection triggers until the fibre is re-seated.
    const evr = `TIMING:EVR:${pad(rng.int(1, 8))}`;
    device = `${evr}:STATUS`;
    effects.push({ kind: "label", device, from: t0, to: t1, label: "NO_LINK" });
    const delta = Math.round(rng.range(20, 200));
    effects.push({
      kind: "add",
      device: `${evr}:RX:ERRORS`,
      from: t0,
      to: t1 + HOUR_MS,
      delta,
      rampMs: 1000,
    });
  } else {
    device = "BTS:SEPTUM:STATUS";
    effects.push({ kind: "label", device, from: t0, to: t1, label: "FAULT" });
  }
  const watch = [...BEAM_WATCH, "BTS:SEPTUM:STATUS", "LINAC:GUN:CHARGE"];
  return finish({ kind: "injection", id, cause, device, t0, t1, effects, watch });
}

function cooling(rng: Rng, id: string, t0: number): Incident {
  const loop = rng.int(1, 12);
  const t1 = Math.round(t0 + rng.range(30, 110) * MIN_MS);
  const cause = rng.pick([
    "a clogged strainer",
    "cavitation in pump P2",
    "a sticking control valve",
  ]);
  const prefix = `CW:LOOP:${pad(loop)}`;
  const level = rng.range(0.6, 0.8);
  // Less flow carries the same heat: the return temperature rises as ΔT·F₀/F, with the water's lag.
  const effects: Effect[] = [
    { kind: "scale", device: `${prefix}:FLOW`, from: t0, to: t1, level, recoverMs: 5 * MIN_MS },
  ];
  const watch = [`${prefix}:TEMP:RET`];
  return finish({ kind: "cooling", id, loop, cause, t0, t1, effects, watch });
}

function psOvertemp(rng: Rng, id: string, t0: number): Incident {
  const device = `RING:COR:${rng.pick(["H", "V"])}${pad(rng.int(1, 40))}`;
  const t1 = Math.round(t0 + rng.range(40, 120) * MIN_MS);
  const cause = rng.pick([
    "a failed cabinet fan",
    "a clogged air filter",
    "a failed rack cooling unit",
  ]);
  const delta = rng.range(18, 30);
  const effects: Effect[] = [
    { kind: "add", device: `${device}:PS:TEMP`, from: t0, to: t1, delta, rampMs: 15 * MIN_MS },
  ];
  return finish({ kind: "ps-overtemp", id, device, cause, t0, t1, effects, watch: [] });
}
