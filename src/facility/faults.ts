/**
 * Faults added to the live machine (a graded task's starting conditions, a
 * what-if): each is a cause, built as the incidents of the history are, whose
 * effects change the machine's inputs from its start on. The physics then
 * gives everything that follows, and the alarm log holds the alarms it raises.
 *
 * @module
 */

import type { Effect, Happening } from "./effects.ts";
import { effectEnd } from "./effects.ts";
import { BEAM_WATCH, type InjectionCause, type RfCause } from "./incidents.ts";
import type { Physics } from "./physics.ts";
import type { Setpoints } from "./setpoints.ts";

const MIN_MS = 60_000;
/** A fault without an end lasts this long: past any attempt, any query. */
const OPEN_ENDED_MS = 30 * 24 * 60 * MIN_MS;

/** A fault, its times in epoch ms. */
export type FaultSpec =
  /** A ring RF station trips; `reset` and `on` default to "not yet". */
  | { kind: "rf-trip"; station: number; cause: RfCause; at: number; reset?: number; on?: number }
  /** A pressure burst at one ring ion gauge, reaching `peakMbar` there, decaying with `tauMin`. */
  | { kind: "vacuum-burst"; gauge: string; peakMbar: number; at: number; tauMin: number }
  /** A BPM's electronics drift: its reading walks off at `mmPerMin`; the beam does not move. */
  | { kind: "bpm-drift"; device: string; mmPerMin: number; at: number }
  /** A power supply faults (`device`: its prefix) and trips off: its output goes to zero. */
  | { kind: "supply-fault"; device: string; at: number; until?: number }
  /** A power supply's cabinet overheats: its temperature climbs by `riseDegC` over `rampMin`. */
  | {
    kind: "overtemp";
    device: string;
    riseDegC: number;
    rampMin: number;
    at: number;
    until?: number;
  }
  /** Injection trouble, as in the history (`level`: the gun's charge factor or the kicker's sag, kV). */
  | {
    kind: "injection";
    cause: InjectionCause;
    at: number;
    until?: number;
    device?: string;
    level?: number;
  }
  /** An undulator's gap drive stalls: status FAULT, the gap holds where it was. */
  | { kind: "id-stall"; device: string; at: number; until: number };

/** Every BPM position and photon BPM: what a fault of a magnet's supply can move. */
function orbitDevices(physics: Physics): string[] {
  return physics.facility.catalogue.filter((d) =>
    (d.role === "bpm" && (d.suffix === "X" || d.suffix === "Y")) || d.model === "xbpm"
  ).map((d) => d.name);
}

/** The {@link Happening} of a fault on `physics`'s machine (`sp`: the state it joins). */
export function buildFault(spec: FaultSpec, physics: Physics, sp: Setpoints): Happening {
  const effects: Effect[] = [];
  let watch: string[] = [];
  const byName = physics.facility.byName;
  const need = (name: string) => {
    if (!byName.has(name)) throw new RangeError(`Fault ${spec.kind}: no device ${name}`);
    return name;
  };
  switch (spec.kind) {
    case "rf-trip": {
      const stn = `RF:STN:${String(spec.station).padStart(2, "0")}`;
      need(`${stn}:CAV:VOLT`);
      const t0 = spec.at;
      const reset = spec.reset ?? t0 + OPEN_ENDED_MS;
      const on = spec.on ?? (spec.reset === undefined ? reset : reset + 3 * MIN_MS);
      if (spec.cause === "REFL_PWR") {
        effects.push({
          kind: "rise",
          device: `${stn}:REFL:PWR`,
          from: t0 - 4 * MIN_MS,
          to: t0,
          peak: 32,
        });
      } else if (spec.cause === "ARC") {
        effects.push({
          kind: "rise",
          device: `${stn}:REFL:PWR`,
          from: t0 - 1500,
          to: t0,
          peak: 60,
        });
        effects.push({
          kind: "spike",
          device: `${stn}:VAC:PRES`,
          from: t0,
          factor: 30,
          tauMs: MIN_MS,
        });
      } else if (spec.cause === "WATER") {
        effects.push({
          kind: "scale",
          device: `${stn}:WATER:FLOW`,
          from: t0 - 4 * MIN_MS,
          to: reset,
          level: 0.5,
          recoverMs: MIN_MS,
        });
      } else if (spec.cause === "KLYSTRON") {
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
      effects.push(
        {
          kind: "scale",
          device: `${stn}:CAV:VOLT`,
          from: t0,
          to: reset,
          level: 0,
          recoverMs: Math.max(1, on - reset),
        },
        { kind: "label", device: `${stn}:STATUS`, from: t0, to: reset, label: "TRIPPED" },
        { kind: "label", device: `${stn}:INTLK`, from: t0, to: reset, label: spec.cause },
      );
      if (on > reset) {
        effects.push({
          kind: "label",
          device: `${stn}:STATUS`,
          from: reset,
          to: on,
          label: "CONDITIONING",
        });
      }
      watch = [
        `${stn}:FWD:PWR`,
        `${stn}:REFL:PWR`,
        `${stn}:CIRC:TEMP`,
        `${stn}:CAV:TEMP`,
        ...BEAM_WATCH,
      ];
      break;
    }
    case "vacuum-burst": {
      const gauge = byName.get(need(spec.gauge));
      const m = /^RING:VAC:IG:(\d+):PRES$/.exec(spec.gauge);
      if (gauge === undefined || m === null) {
        throw new RangeError(`Fault vacuum-burst: ${spec.gauge} is not a ring ion gauge`);
      }
      const cell = Math.ceil(Number(m[1]) / 3);
      const base = physics.baseLevel(gauge, spec.at, sp);
      const factor = Math.max(1, spec.peakMbar / base);
      const tauMs = spec.tauMin * MIN_MS;
      for (let i = 0; i < 3; i++) {
        const device = `RING:VAC:IG:${String(cell * 3 - 2 + i).padStart(2, "0")}:PRES`;
        if (!byName.has(device)) continue;
        effects.push({
          kind: "spike",
          device,
          from: spec.at,
          factor: device === spec.gauge ? factor : 1 + factor / 6,
          tauMs,
        });
      }
      watch = [...BEAM_WATCH];
      for (let i = 0; i < 6; i++) {
        const n = String(cell * 6 - 5 + i).padStart(3, "0");
        if (!byName.has(`RING:VAC:IP:${n}:PRES`)) continue;
        effects.push({
          kind: "spike",
          device: `RING:VAC:IP:${n}:PRES`,
          from: spec.at,
          factor: 1 + factor / 4,
          tauMs,
        });
        watch.push(`RING:VAC:IP:${n}:CURRENT`);
      }
      break;
    }
    case "bpm-drift": {
      need(spec.device);
      effects.push({
        kind: "drift",
        device: spec.device,
        from: spec.at,
        to: spec.at + OPEN_ENDED_MS,
        delta: (spec.mmPerMin * OPEN_ENDED_MS) / MIN_MS,
      });
      break;
    }
    case "supply-fault": {
      const setpoint = byName.has(`${spec.device}:SETPT`)
        ? `${spec.device}:SETPT`
        : `${spec.device}:CURRENT`;
      need(setpoint);
      const until = spec.until ?? spec.at + OPEN_ENDED_MS;
      effects.push(
        {
          kind: "label",
          device: need(`${spec.device}:STATUS`),
          from: spec.at,
          to: until,
          label: "FAULT",
        },
        { kind: "hold", device: setpoint, from: spec.at, to: until, value: 0 },
      );
      // The kick, current or field it held goes: the beam moves wherever that reaches.
      watch = [`${spec.device}:RDBK`, ...BEAM_WATCH, ...orbitDevices(physics)];
      break;
    }
    case "overtemp": {
      const until = spec.until ?? spec.at + OPEN_ENDED_MS;
      effects.push({
        kind: "add",
        device: need(`${spec.device}:PS:TEMP`),
        from: spec.at,
        to: until,
        delta: spec.riseDegC,
        rampMs: spec.rampMin * MIN_MS,
      });
      break;
    }
    case "injection": {
      const until = spec.until ?? spec.at + OPEN_ENDED_MS;
      if (spec.cause === "kicker") {
        const device = need(spec.device ?? "BTS:KICKER:02:VOLT:RDBK");
        effects.push({
          kind: "add",
          device,
          from: spec.at - MIN_MS,
          to: until,
          delta: -(spec.level ?? 2),
          rampMs: 30_000,
        });
      } else if (spec.cause === "gun") {
        effects.push({
          kind: "scale",
          device: "LINAC:GUN:CHARGE",
          from: spec.at,
          to: until,
          level: spec.level ?? 0.01,
          recoverMs: 2 * MIN_MS,
        });
      } else if (spec.cause === "timing") {
        const evr = (spec.device ?? "TIMING:EVR:03:STATUS").replace(/:STATUS$/, "");
        effects.push({
          kind: "label",
          device: need(`${evr}:STATUS`),
          from: spec.at,
          to: until,
          label: "NO_LINK",
        });
        effects.push({
          kind: "add",
          device: `${evr}:RX:ERRORS`,
          from: spec.at,
          to: until,
          delta: 50,
          rampMs: 1000,
        });
      } else {
        effects.push({
          kind: "label",
          device: "BTS:SEPTUM:STATUS",
          from: spec.at,
          to: until,
          label: "FAULT",
        });
      }
      watch = [...BEAM_WATCH];
      break;
    }
    case "id-stall": {
      need(`${spec.device}:GAP:SETPT`);
      effects.push(
        {
          kind: "label",
          device: need(`${spec.device}:STATUS`),
          from: spec.at,
          to: spec.until,
          label: "FAULT",
        },
        { kind: "hold", device: `${spec.device}:GAP:SETPT`, from: spec.at, to: spec.until },
      );
      break;
    }
  }
  const start = Math.min(...effects.map((e) => e.from));
  const end = Math.max(...effects.map(effectEnd));
  return { id: `F${spec.kind}.${spec.at}`, start, end, effects, watch };
}
