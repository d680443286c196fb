/**
 * Facility scale: the default facility grown to 10^5–10^6 devices by
 * lengthening its storage ring with arcs `ARC001`, `ARC002`… of ten cells
 * each: the same machine, one ring with one beam. Each arc's devices are in
 * today's naming convention (`ARC007:BPM:05:X`, `ARC007:COR:H03:SETPT`,
 * `ARC007:QUAD:12:CURRENT`, `ARC007:VAC:IP:012:PRES`, `ARC007:ENERGY:MEAS`),
 * with descriptions in the style of the catalogue ("Arc 7 BPM 05 (cell 01)
 * horizontal position") and the signal definitions (units, limits, alarms,
 * models) of the storage-ring families in `configs/devices/facility.json`.
 *
 * The grown ring keeps the catalogue's cell, its bending radius and its RF:
 * with more cells each dipole bends less, the circumference, the harmonic
 * number and the integer tunes grow (the quadrupoles are matched again to the
 * same fractional tunes), the energy loss per turn and so the RF power stay
 * those of the catalogue's ring. What the arcs' devices read follows from
 * that ring (`arc_physics.ts`).
 *
 * The arcs are compact: one {@link ArcDevice} per device holds only its arc
 * and its slot in the arc's template; names, descriptions and facts are
 * computed when asked for, so a 10^6-device facility costs tens of MB, and
 * walking `facility.devices` to build an index does not keep a second copy.
 * Names are looked up by parsing, not through a million-entry map.
 *
 * @module
 */

import type { DeviceInfo, Severity } from "../control/records.ts";
import { ARC_CELLS, arcSize, type ArcTemplate, arcTemplate, type Slot } from "./arc_template.ts";
import {
  defaultFacility,
  type DeviceDef,
  type Facility,
  type FacilitySpec,
  type SignalSpec,
} from "./facility.ts";
import { hashString } from "./noise.ts";

export { ARC_CELLS, arcSize, arcTemplate } from "./arc_template.ts";

/** Devices of the default facility: the smallest `[simulator] devices` accepted. */
export const BASE_DEVICE_COUNT = 3069;
/** The largest `[simulator] devices` accepted. */
export const MAX_DEVICE_COUNT = 1_000_000;

/** Arc devices' facts kept at once (about 300 bytes each); a power of two. */
const INFO_KEPT = 4096;
const keptFor: (ArcDevice | undefined)[] = new Array(INFO_KEPT).fill(undefined);
const keptInfo: (DeviceInfo | undefined)[] = new Array(INFO_KEPT).fill(undefined);

/** One arc: its number, its name and where its devices start in `facility.devices`. */
export interface Arc {
  readonly number: number;
  /** `ARC007`. */
  readonly name: string;
  /** Index of the arc's first device in `facility.devices`. */
  readonly start: number;
  readonly devices: readonly DeviceDef[];
}

/** A device of a generated arc: two references, everything else computed on demand. */
export class ArcDevice implements DeviceDef {
  #key: number | undefined;
  #name: string | undefined;
  constructor(readonly arc: Arc, readonly slot: Slot) {}
  get name(): string {
    if (this.#name !== undefined) return this.#name;
    const name = this.arc.name + this.slot.tail;
    if (this.slot.hot) this.#name = name;
    return name;
  }
  get prefix(): string {
    return this.arc.name + this.slot.prefixTail;
  }
  get suffix(): string {
    return this.slot.suffix;
  }
  get index(): number {
    return this.slot.index;
  }
  get plane(): "H" | "V" | "" {
    return this.slot.plane;
  }
  get role(): string {
    return this.slot.role;
  }
  get section(): string {
    return this.arc.name;
  }
  get spec(): SignalSpec {
    return this.slot.spec;
  }
  get model(): string {
    return this.slot.model;
  }
  get key(): number {
    return this.#key ??= hashString(this.name);
  }
  get periodMs(): number {
    return this.slot.periodMs;
  }
  get labelSeverity(): ReadonlyMap<string, Severity> {
    return this.slot.labelSeverity;
  }
  /**
   * Built on demand and kept in a small direct-mapped cache of {@link INFO_KEPT}
   * entries: a read asks for it several times, a walk over 10^6 devices keeps
   * almost none. Shared, like the catalogue's: callers copy before they change it.
   */
  get info(): DeviceInfo {
    // Direct-mapped: one slot per (arc, position) modulo the size, no map to keep in order.
    const at = (this.arc.number * 8191 + this.slot.pos) & (INFO_KEPT - 1);
    if (keptFor[at] === this) return keptInfo[at] as DeviceInfo;
    const s = this.slot;
    const info: DeviceInfo = {
      device: this.name,
      exists: true,
      description: s.desc.head + this.arc.number + s.desc.tail,
      units: s.facts.units,
      writable: s.facts.writable,
      type: s.facts.type,
      subsystem: this.arc.name,
    };
    if (s.facts.limits) info.limits = s.facts.limits;
    if (s.facts.alarm) info.alarm = s.facts.alarm;
    if (s.facts.precision !== undefined) info.precision = s.facts.precision;
    if (s.facts.labels) info.labels = s.facts.labels;
    keptFor[at] = this;
    keptInfo[at] = info;
    return info;
  }
  get source(): DeviceDef | undefined {
    const src = this.slot.source;
    return typeof src === "number" ? this.arc.devices[this.arc.start + src] : src;
  }
}

/** Arcs needed to reach at least `devices` devices. */
export function arcCount(devices: number): number {
  return Math.max(0, Math.ceil((devices - BASE_DEVICE_COUNT) / arcSize()));
}

let cached: { devices: number; facility: Facility } | undefined;

/**
 * The default facility grown with whole arcs to at least `devices` devices
 * (at most {@link MAX_DEVICE_COUNT}): the same `devices` gives the same names,
 * byte for byte. At or below {@link BASE_DEVICE_COUNT} it is the default
 * facility itself. The last facility built is kept for the next call.
 */
export function scaledFacility(devices: number): Facility {
  if (cached?.devices === devices) return cached.facility;
  const facility = buildScaledFacility(devices);
  cached = { devices, facility };
  return facility;
}

/** {@link scaledFacility} without the kept copy: builds anew at every call. */
export function buildScaledFacility(devices: number): Facility {
  if (!Number.isInteger(devices) || devices > MAX_DEVICE_COUNT) {
    throw new RangeError(
      `simulator devices must be an integer of at most ${MAX_DEVICE_COUNT}, got ${devices}`,
    );
  }
  const base = defaultFacility();
  if (devices <= BASE_DEVICE_COUNT) return base;
  const t = arcTemplate();
  const arcs = arcCount(devices);
  const spec = grownSpec(base.spec, arcs);
  const all: DeviceDef[] = new Array(arcs * t.slots.length + base.devices.length);
  const arcList: Arc[] = [];
  let k = 0;
  // Every ARCnnn name sorts before the catalogue's first section (BL), and
  // the template is sorted: the whole list stays sorted by name.
  for (let n = 1; n <= arcs; n++) {
    const arc: Arc = { number: n, name: arcName(n), start: k, devices: all };
    arcList.push(arc);
    for (const slot of t.slots) all[k++] = new ArcDevice(arc, slot);
  }
  for (const def of base.devices) all[k++] = def;
  return {
    spec,
    devices: all,
    byName: new ScaledNames(base.byName, arcList, t, all),
    catalogue: base.devices,
  };
}

/**
 * The definition of the catalogue's facility with `arcs` arcs of ten cells
 * added to its ring: more cells, the same fractional tunes, a harmonic number
 * that keeps the RF frequency; the catalogue's magnet families still power
 * the catalogue's cells.
 */
function grownSpec(spec: FacilitySpec, arcs: number): FacilitySpec {
  const name = Object.keys(spec.optics).find((n) => spec.optics[n]?.kind === "ring");
  const ring = name === undefined ? undefined : spec.optics[name];
  const cell = ring?.cell;
  if (name === undefined || ring === undefined || cell === undefined) return spec;
  const cells = cell.cells + arcs * ARC_CELLS;
  const tunes = ring.phaseTurns.map((nu) => {
    const fraction = nu - Math.floor(nu);
    return Math.floor((nu * cells) / cell.cells) + fraction;
  });
  return {
    ...spec,
    optics: {
      ...spec.optics,
      [name]: {
        ...ring,
        lengthM: cells * cell.cellLengthM,
        phaseTurns: tunes,
        cell: { ...cell, cells, familyCells: cell.familyCells ?? cell.cells },
      },
    },
    ring: { ...spec.ring, harmonic: (spec.ring.harmonic * cells) / cell.cells },
  };
}

/**
 * The devices worth comparing with a name that does not exist, for "did you
 * mean": on a grown facility, the catalogue's and those of the arc the name
 * points at (else the first arc's), not a million; otherwise every device.
 */
export function nearbyDevices(facility: Facility, name: string): readonly DeviceDef[] {
  const names = facility.byName;
  if (!(names instanceof ScaledNames)) return facility.devices;
  return names.near(name.trim().toUpperCase());
}

/** `ARC007`. */
export function arcName(n: number): string {
  return `ARC${String(n).padStart(3, "0")}`;
}

/** Name look-up over the catalogue and the arcs, by parsing arc names. */
class ScaledNames implements ReadonlyMap<string, DeviceDef> {
  constructor(
    private readonly base: ReadonlyMap<string, DeviceDef>,
    private readonly arcs: readonly Arc[],
    private readonly t: ArcTemplate,
    private readonly all: readonly DeviceDef[],
  ) {}

  get size(): number {
    return this.all.length;
  }

  get(name: string): DeviceDef | undefined {
    // ARCnnn:… parsed by hand: a read looks every name up, a regex here cost more than the physics.
    if (name.length < 8 || !name.startsWith("ARC") || name.charCodeAt(6) !== 58) {
      return this.base.get(name);
    }
    let n = 0;
    for (let i = 3; i < 6; i++) {
      const d = name.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return this.base.get(name);
      n = n * 10 + d;
    }
    const arc = this.arcs[n - 1];
    const slot = this.t.find(name, 6);
    if (arc === undefined || slot === undefined) return undefined;
    return this.all[arc.start + slot.pos];
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** The catalogue's devices and one arc's: the one `name` points at, else the first. */
  near(name: string): DeviceDef[] {
    const m = /^ARC(\d{3})/.exec(name);
    const arc = this.arcs[m ? Number(m[1]) - 1 : 0] ?? this.arcs[0];
    const size = this.t.slots.length;
    const own = arc ? this.all.slice(arc.start, arc.start + size) : [];
    return [...own, ...this.base.values()];
  }

  forEach(fn: (value: DeviceDef, key: string, map: ReadonlyMap<string, DeviceDef>) => void): void {
    for (const def of this.all) fn(def, def.name, this);
  }

  *entries(): MapIterator<[string, DeviceDef]> {
    for (const def of this.all) yield [def.name, def];
  }

  *keys(): MapIterator<string> {
    for (const def of this.all) yield def.name;
  }

  *values(): MapIterator<DeviceDef> {
    yield* this.all;
  }

  [Symbol.iterator](): MapIterator<[string, DeviceDef]> {
    return this.entries();
  }
}
