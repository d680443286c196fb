/**
 * Facility scale: the default facility grown to 10^5–10^6 devices by adding
 * storage-ring arcs `ARC001`, `ARC002`… Each arc is a section in today's
 * naming convention (`ARC007:BPM:05:X`, `ARC007:COR:H03:SETPT`,
 * `ARC007:VAC:IP:012:PRES`, `ARC007:RF:STN:02:PHASE:SETPT`,
 * `ARC007:ENERGY:MEAS`), with ten cells, descriptions in the style of the
 * catalogue ("Arc 7 BPM 05 (cell 01) horizontal position") and the signal
 * definitions (units, limits, alarms, models) of the storage-ring families in
 * `configs/devices/facility.json`.
 *
 * The arcs are compact: one {@link ArcDevice} per device holds only its arc
 * and its slot in the arc's template; names, descriptions and facts are
 * computed when asked for, so a 10^6-device facility costs tens of MB, and
 * walking `facility.devices` to build an index does not keep a second copy.
 * Names are looked up by parsing, not through a million-entry map.
 *
 * Physics of the arcs (`arc-orbit`, `arc-energy`, see `arc_physics.ts`):
 * each arc is its own closed-orbit ring — its BPMs respond to its own
 * correctors only — and its beam energy follows its own RF stations' phase
 * and voltage. Every other signal uses the catalogue's models.
 *
 * @module
 */

import type { DeviceInfo, Severity } from "../adapter.ts";
import { SEVERITY_ORDER } from "../adapter.ts";
import { defaultFacility, type DeviceDef, type Facility, type SignalSpec } from "./facility.ts";
import { hashString } from "./noise.ts";

/** Devices of the default facility: the smallest `[simulator] devices` accepted. */
export const BASE_DEVICE_COUNT = 3044;
/** The largest `[simulator] devices` accepted. */
export const MAX_DEVICE_COUNT = 1_000_000;
/** Cells per arc. */
export const ARC_CELLS = 10;

/** One family of an arc: its name tail, the catalogue family its signals come from, its ids. */
interface ArcFamily {
  /** After `ARCnnn:`, with `{id}`; "" for the arc's own signals. */
  tail: string;
  /** Catalogue family whose signals (and defaults) it reuses; absent for `own`. */
  like?: string;
  desc: string;
  role: string;
  count: number;
  width: number;
  letters?: string[];
  /** Devices per cell; the arc has {@link ARC_CELLS} cells. */
  perCell?: number;
  /** Signals that take another model than the catalogue's. */
  models?: Record<string, string>;
  own?: SignalSpec[];
}

const ARC_ENERGY_MEV = 3000;

const ARC_FAMILIES: ArcFamily[] = [
  {
    tail: "BPM:{id}",
    like: "RING:BPM:{id}",
    desc: "Arc {arc} BPM {id} (cell {cell})",
    role: "bpm",
    count: 60,
    width: 2,
    perCell: 6,
    models: { X: "arc-orbit", Y: "arc-orbit" },
  },
  {
    tail: "COR:{id}",
    like: "RING:COR:{id}",
    desc: "Arc {arc} {plane} corrector {id} (cell {cell})",
    role: "corrector",
    count: 40,
    width: 2,
    letters: ["H", "V"],
    perCell: 4,
  },
  {
    tail: "QUAD:{id}",
    like: "LINAC:QUAD:{id}",
    desc: "Arc {arc} quadrupole {id} (cell {cell})",
    role: "quad",
    count: 60,
    width: 2,
    perCell: 6,
  },
  {
    tail: "SEXT:{id}",
    like: "LINAC:QUAD:{id}",
    desc: "Arc {arc} sextupole {id} (cell {cell})",
    role: "sext",
    count: 40,
    width: 2,
    perCell: 4,
  },
  {
    tail: "BLM:{id}",
    like: "RING:BLM:{id}",
    desc: "Arc {arc} beam-loss monitor {id} (cell {cell})",
    role: "blm",
    count: 120,
    width: 3,
    perCell: 12,
  },
  {
    tail: "VAC:IG:{id}",
    like: "RING:VAC:IG:{id}",
    desc: "Arc {arc} ion gauge {id} (cell {cell})",
    role: "",
    count: 60,
    width: 2,
    perCell: 6,
  },
  {
    tail: "VAC:IP:{id}",
    like: "RING:VAC:IP:{id}",
    desc: "Arc {arc} ion pump {id} (cell {cell})",
    role: "",
    count: 120,
    width: 3,
    perCell: 12,
  },
  {
    tail: "VAC:VALVE:{id}",
    like: "RING:VAC:VALVE:{id}",
    desc: "Arc {arc} sector valve {id}",
    role: "",
    count: 2,
    width: 2,
  },
  {
    tail: "TUNNEL:TEMP:{id}",
    like: "RING:TUNNEL:TEMP:{id}",
    desc: "Arc {arc} tunnel air temperature {id} (cell {cell})",
    role: "",
    count: 160,
    width: 3,
    perCell: 16,
  },
  {
    tail: "CW:MAG:{id}",
    like: "CW:MAG:{id}",
    desc: "Arc {arc} magnet cooling circuit {id} (cell {cell})",
    role: "",
    count: 60,
    width: 2,
    perCell: 6,
  },
  {
    tail: "RF:STN:{id}",
    like: "RF:STN:{id}",
    desc: "Arc {arc} RF station {n}",
    role: "rfstation",
    count: 2,
    width: 2,
  },
  {
    tail: "",
    desc: "Arc {arc}",
    role: "",
    count: 0,
    width: 0,
    own: [{
      suffix: "ENERGY:MEAS",
      desc: "beam energy (from its RF stations)",
      units: "MeV",
      limits: [0, 4000],
      prec: 2,
      period: 1,
      alarm: { lolo: 2940, low: 2970, high: 3030, hihi: 3060 },
      model: "arc-energy",
      nom: ARC_ENERGY_MEV,
      sigma: 0.2,
    }],
  },
];

/** One device of the arc template: everything but the arc number. */
export interface Slot {
  /** Position in the arc's sorted device list. */
  readonly pos: number;
  /** The name after `ARCnnn`, starting with `:`. */
  readonly tail: string;
  /** The device prefix after `ARCnnn` ("" for the arc's own signals). */
  readonly prefixTail: string;
  readonly suffix: string;
  readonly index: number;
  readonly plane: "H" | "V" | "";
  readonly role: string;
  readonly spec: SignalSpec;
  readonly model: string;
  readonly periodMs: number;
  readonly labelSeverity: ReadonlyMap<string, Severity>;
  /** Description with `{arc}` still in it. */
  readonly desc: string;
  /** Facts shared by this slot in every arc. */
  readonly facts: Omit<DeviceInfo, "device" | "description" | "subsystem">;
  /** The source in the same arc (position), or a catalogue device, or none. */
  readonly source: number | DeviceDef | undefined;
  /** A setpoint: its name is kept once asked for, as the physics looks it up at every read. */
  readonly hot: boolean;
}

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
  /** A fresh object at every call (not kept, so a walk over 10^6 devices keeps nothing). */
  get info(): DeviceInfo {
    const s = this.slot;
    const info: DeviceInfo = {
      device: this.name,
      exists: true,
      description: s.desc.replace("{arc}", String(this.arc.number)),
      units: s.facts.units,
      writable: s.facts.writable,
      type: s.facts.type,
      subsystem: this.arc.name,
    };
    if (s.facts.limits) info.limits = s.facts.limits;
    if (s.facts.alarm) info.alarm = s.facts.alarm;
    if (s.facts.precision !== undefined) info.precision = s.facts.precision;
    if (s.facts.labels) info.labels = s.facts.labels;
    return info;
  }
  get source(): DeviceDef | undefined {
    const src = this.slot.source;
    return typeof src === "number" ? this.arc.devices[this.arc.start + src] : src;
  }
}

/** The arc template, sorted by name tail, built once from the catalogue. */
export interface ArcTemplate {
  readonly slots: readonly Slot[];
  readonly byTail: ReadonlyMap<string, Slot>;
}

let template: ArcTemplate | undefined;

/** Devices per arc. */
export function arcSize(): number {
  return arcTemplate().slots.length;
}

/** The arc template (built on first use from the default facility's families). */
export function arcTemplate(): ArcTemplate {
  template ??= buildTemplate(defaultFacility());
  return template;
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
  return { spec: base.spec, devices: all, byName: new ScaledNames(base.byName, arcList, t, all) };
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
    if (!name.startsWith("ARC")) return this.base.get(name);
    const m = /^ARC(\d{3})(:.*)$/.exec(name);
    if (m === null) return this.base.get(name);
    const arc = this.arcs[Number(m[1]) - 1];
    const slot = this.t.byTail.get(m[2] ?? "");
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

function buildTemplate(base: Facility): ArcTemplate {
  const families = new Map(base.spec.families.map((f) => [f.prefix, f]));
  type Draft = Omit<Slot, "pos" | "source" | "hot"> & { of: string | undefined };
  const drafts: Draft[] = [];
  for (const family of ARC_FAMILIES) {
    const like = family.like === undefined ? undefined : families.get(family.like);
    if (family.like !== undefined && like === undefined) {
      throw new Error(`Arc family ${family.tail} copies ${family.like}, which does not exist`);
    }
    const signals = family.own ?? (like?.signals ?? []).map((s) => ({ ...like?.defaults, ...s }));
    for (const id of ids(family)) {
      const prefixTail = family.tail === "" ? "" : `:${family.tail.replace("{id}", id.text)}`;
      for (const raw of signals) {
        const model = family.models?.[raw.suffix] ?? raw.model ?? "analog";
        const spec: SignalSpec = model === raw.model ? raw : { ...raw, model };
        const tail = spec.suffix === "" ? prefixTail : `${prefixTail}:${spec.suffix}`;
        drafts.push({
          tail,
          prefixTail,
          suffix: spec.suffix,
          index: id.index,
          plane: planeOf(id.letter, spec.suffix),
          role: family.role,
          spec,
          model,
          periodMs: (spec.period ?? 10) * 1000,
          labelSeverity: severities(tail, spec),
          desc: describe(family, spec, id),
          facts: factsOf(spec),
          of: spec.of,
        });
      }
    }
  }
  drafts.sort((a, b) => (a.tail < b.tail ? -1 : a.tail > b.tail ? 1 : 0));
  const pos = new Map(drafts.map((d, i) => [d.tail, i]));
  const slots = drafts.map(({ of, ...d }, i): Slot => {
    let source: number | DeviceDef | undefined;
    if (of !== undefined) {
      source = pos.get(`${d.prefixTail}:${of}`) ?? base.byName.get(of);
      if (source === undefined) throw new Error(`Arc device ${d.tail}: source "${of}" is missing`);
    }
    return { ...d, pos: i, source, hot: d.model === "set" };
  });
  return { slots, byTail: new Map(slots.map((s) => [s.tail, s])) };
}

interface Id {
  text: string;
  index: number;
  letter: string;
}

function ids(family: ArcFamily): Id[] {
  if (family.count === 0) return [{ text: "", index: 0, letter: "" }];
  const out: Id[] = [];
  for (const letter of family.letters ?? [""]) {
    for (let i = 1; i <= family.count; i++) {
      out.push({ text: letter + String(i).padStart(family.width, "0"), index: i, letter });
    }
  }
  return out;
}

function planeOf(letter: string, suffix: string): "H" | "V" | "" {
  if (letter === "H" || letter === "V") return letter;
  if (/(^|:)X$/.test(suffix)) return "H";
  if (/(^|:)Y$/.test(suffix)) return "V";
  return "";
}

function describe(family: ArcFamily, signal: SignalSpec, id: Id): string {
  const cell = family.perCell ? String(Math.ceil(id.index / family.perCell)).padStart(2, "0") : "";
  const plane = id.letter === "H" ? "horizontal" : id.letter === "V" ? "vertical" : "";
  const text = signal.desc === "" ? family.desc : `${family.desc} ${signal.desc}`;
  return text.replace("{id}", id.text).replace("{n}", String(id.index)).replace("{cell}", cell)
    .replace("{plane}", plane);
}

function factsOf(spec: SignalSpec): Slot["facts"] {
  const facts: Slot["facts"] = {
    exists: true,
    units: spec.units ?? "",
    writable: spec.writable === true,
    type: (spec.type ?? "number") as DeviceInfo["type"],
  };
  const [min, max] = spec.limits ?? [];
  if (min !== undefined && max !== undefined) facts.limits = { min, max };
  if (spec.alarm !== undefined) facts.alarm = { ...spec.alarm };
  if (spec.prec !== undefined) facts.precision = spec.prec;
  if (spec.labels !== undefined) facts.labels = [...spec.labels];
  return facts;
}

function severities(tail: string, signal: SignalSpec): Map<string, Severity> {
  const out = new Map<string, Severity>();
  for (const [label, severity] of Object.entries(signal.severity ?? {})) {
    const known = SEVERITY_ORDER.find((s) => s === severity);
    if (known === undefined) throw new Error(`Arc device ${tail}: unknown severity "${severity}"`);
    out.set(label, known);
  }
  return out;
}
