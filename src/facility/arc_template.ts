/**
 * The arc template of a grown facility (`scale.ts`): one arc's devices —
 * ten cells of the storage ring's, each with its BPMs, correctors,
 * individually powered quadrupoles and sextupoles, beam-loss monitors,
 * vacuum, tunnel temperatures and magnet cooling, and the arc's beam energy
 * — in the catalogue's naming, with the signal definitions (units, limits,
 * alarms, models) of the matching families of `configs/devices/facility.json`,
 * sorted by name. Every arc is this template with its own number; where each
 * device sits in its cell is {@link ARC_CELL}.
 *
 * @module
 */

import type { DeviceInfo, Severity } from "../control/records.ts";
import { SEVERITY_ORDER } from "../control/records.ts";
import { defaultFacility, type DeviceDef, type Facility, type SignalSpec } from "./facility.ts";
/** Cells per arc. */
export const ARC_CELLS = 10;

/** A magnet of an arc cell: the catalogue family it copies the optics of, its place and length. */
export interface ArcMagnet {
  /** The catalogue family whose design strength it has (`RING:Q2`), or "" for a trim (0 at design). */
  readonly like: string;
  readonly atM: number;
  readonly lengthM: number;
}

/**
 * Where each family's devices sit in an arc cell (m from the cell's start),
 * in the order of their numbers: the ring's cell, as in the catalogue's, with
 * more BPMs and correctors, its quadrupoles and sextupoles each on its own
 * supply, and a trim quadrupole that is off at the design optics.
 */
export const ARC_CELL: {
  readonly positions: Readonly<Record<string, readonly number[]>>;
  readonly quads: readonly ArcMagnet[];
  readonly sextupoles: readonly ArcMagnet[];
} = {
  positions: {
    "BPM": [1.0, 3.4, 6.0, 8.4, 11.0, 13.4],
    "COR:H": [0.95, 4.3, 7.75, 11.5],
    "COR:V": [2.5, 4.2, 9.7, 11.4],
    "BLM": [0.6, 1.8, 3.0, 4.2, 5.4, 6.6, 7.8, 9.0, 10.2, 11.4, 12.6, 13.8],
  },
  quads: [
    { like: "RING:Q1", atM: 0, lengthM: 0.2 },
    { like: "RING:Q5", atM: 0.6, lengthM: 0.2 },
    { like: "RING:Q2", atM: 3.6, lengthM: 0.2 },
    { like: "RING:Q3", atM: 7.2, lengthM: 0.2 },
    { like: "RING:Q4", atM: 10.8, lengthM: 0.2 },
    { like: "", atM: 12.0, lengthM: 0.2 },
  ],
  sextupoles: [
    { like: "RING:S1", atM: 0.35, lengthM: 0.2 },
    { like: "RING:S3", atM: 3.95, lengthM: 0.2 },
    { like: "RING:S2", atM: 7.55, lengthM: 0.2 },
    { like: "RING:S4", atM: 11.15, lengthM: 0.2 },
  ],
};

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

const ARC_FAMILIES: ArcFamily[] = [
  {
    tail: "BPM:{id}",
    like: "RING:BPM:{id}",
    desc: "Arc {arc} BPM {id} (cell {cell})",
    role: "bpm",
    count: 60,
    width: 2,
    perCell: 6,
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
    tail: "",
    desc: "Arc {arc}",
    role: "",
    count: 0,
    width: 0,
    own: [{
      suffix: "ENERGY:MEAS",
      desc: "beam energy (the ring's, less what it has radiated since the RF)",
      units: "MeV",
      limits: [0, 4000],
      prec: 3,
      period: 1,
      alarm: { lolo: 2940, low: 2970, high: 3030, hihi: 3060 },
      model: "arc-energy",
      sigma: 0.005,
      needsBeam: true,
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
  /** The description around the arc number: `head` + number + `tail`. */
  readonly desc: { readonly head: string; readonly tail: string };
  /** Facts shared by this slot in every arc. */
  readonly facts: Omit<DeviceInfo, "device" | "description" | "subsystem">;
  /** The source in the same arc (position), or a catalogue device, or none. */
  readonly source: number | DeviceDef | undefined;
  /** A setpoint: its name is kept once asked for, as the physics looks it up at every read. */
  readonly hot: boolean;
}

/** The arc template, sorted by name tail, built once from the catalogue. */
export interface ArcTemplate {
  readonly slots: readonly Slot[];
  /** The slot whose tail ends `name` from `from` on, if any. */
  find(name: string, from: number): Slot | undefined;
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
        // One flat string: a tail built from pieces is compared piece by piece at every look-up.
        const tail = [...(spec.suffix === "" ? prefixTail : `${prefixTail}:${spec.suffix}`)].join(
          "",
        );
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
          desc: around(describe(family, spec, id), "{arc}"),
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
  // Keyed by a hash of the tail's characters, computed in place: a look-up of a
  // sliced name in a map of strings cost more than the physics of the read.
  const byHash = new Map<number, Slot[]>();
  for (const slot of slots) {
    const h = tailHash(slot.tail, 0);
    byHash.set(h, [...(byHash.get(h) ?? []), slot]);
  }
  return {
    slots,
    find(name, from) {
      const candidates = byHash.get(tailHash(name, from));
      if (candidates === undefined) return undefined;
      for (const slot of candidates) {
        if (name.length - from === slot.tail.length && name.endsWith(slot.tail)) return slot;
      }
      return undefined;
    },
  };
}

/** FNV-1a of `text` from `from` on. */
function tailHash(text: string, from: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
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

/** The text before and after the first `mark` (all of it before, when there is none). */
function around(text: string, mark: string): { head: string; tail: string } {
  const at = text.indexOf(mark);
  return at < 0
    ? { head: text, tail: "" }
    : { head: text.slice(0, at), tail: text.slice(at + mark.length) };
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
