/**
 * The simulated facility's namespace, expanded from the compact definition in
 * `configs/devices/facility.json` (embedded at compile time by the JSON
 * import). Families of signals are multiplied out over their ids here; the
 * physics that gives them values lives in `physics.ts`.
 *
 * @module
 */

import type { AlarmLimits, DeviceInfo, Severity } from "../control/records.ts";
import { SEVERITY_ORDER } from "../control/records.ts";
import { hashString } from "./noise.ts";
import type { RingCellSpec } from "./ring_lattice.ts";
import facilityJson from "../../configs/devices/facility.json" with { type: "json" };

/** One signal of a family as written in the JSON (after merging `defaults`). */
export interface SignalSpec {
  suffix: string;
  desc: string;
  units?: string;
  type?: string;
  writable?: boolean;
  limits?: number[];
  alarm?: AlarmLimits;
  prec?: number;
  labels?: string[];
  /** Severity of enum labels; labels not listed are NONE. */
  severity?: Record<string, string | undefined>;
  /** Archive sampling period, seconds. */
  period?: number;
  /** How the value is computed; see `physics.ts`. */
  model?: string;
  nom?: number;
  /** Per-device scatter of the nominal: relative, or decades when `log`. */
  spread?: number;
  sigma?: number;
  drift?: number;
  diurnal?: number;
  log?: boolean;
  /** Source signal: a sibling suffix, or a full device name. */
  of?: string;
  ref?: number;
  pow?: number;
  gain?: number;
  init?: number | string;
  /** Initial values of particular devices, by prefix (`RING:Q2`), instead of `init`. */
  inits?: Record<string, number>;
  initSpread?: number;
  len?: number;
  /** A setpoint moves its device at this rate (units/s); readbacks and the beam follow. */
  slew?: number;
  /** A `follow` signal of a setpoint lags it with this time constant, s. */
  lag?: number;
  /** Reads INVALID when the ring holds no beam. */
  needsBeam?: boolean;
  /** Reads INVALID when the injector is not injecting. */
  needsInjection?: boolean;
}

/** A family: a name prefix with `{id}`, its ids and its signals. */
export interface FamilySpec {
  prefix: string;
  desc: string;
  role?: string;
  section?: string;
  /** Devices per storage-ring cell, for `{cell}` in descriptions. */
  perCell?: number;
  ids?: { from: number; to: number; width: number; letters?: string[] };
  defaults?: Partial<SignalSpec>;
  signals: SignalSpec[];
}

/** Linear optics of one beamline section (see `lattice.ts`). */
export interface OpticsSpec {
  /** "line" (open trajectory) or "ring" (closed orbit). */
  kind: string;
  lengthM: number;
  /** Phase advance over the section, turns [H, V]; in a ring, the tunes. */
  phaseTurns: number[];
  /** Relative β modulation a in β₀·(1 ± a·cos(2π·periods·s/L)). */
  betaBeat?: number;
  periods?: number;
  /** Design energy at the start and end of the section, MeV (a linac ramps). */
  energyMeV?: number[];
  /** Peak horizontal dispersion, m: η(s) = etaM·sin²(π·etaPeriods·s/L). */
  etaM?: number;
  etaPeriods?: number;
  /** Whose energy error δ the section's dispersion sees: "linac", "booster" or "ring". */
  energySource?: string;
  /** The section this one continues along the beam path. */
  follows?: string;
  /** Explicit positions (m) of device prefixes; others are placed by id. */
  positions?: Record<string, number>;
  /** A ring: its periodic cell of magnets (see `ring_lattice.ts`). */
  cell?: RingCellSpec;
  /** A ring: the places (m) of a family's devices within a cell, by prefix without the number. */
  cellPositions?: Record<string, number[]>;
  /** A ring: beamline front ends and their source points: [cell, position in the cell (m), arm (m)]. */
  sources?: Record<string, number[]>;
}

/** Storage-ring beam parameters (see `ring.ts`; the lattice gives the rest). */
export interface RingSpec {
  energyMeV: number;
  bendRadiusM: number;
  harmonic: number;
  /** Vertical over horizontal emittance. */
  coupling: number;
  /** Shunt impedance of one RF cavity, MΩ (P = V²/2Rs). */
  shuntImpedanceMOhm: number;
  /** Top-up target current, mA. */
  targetMA: number;
  /** Top-up with the photon shutters open needs at least this stored current, mA. */
  topUpMinMA: number;
  /** Gas-scattering lifetime at the reference pressure (the initial average), h. */
  gasLifetimeH: number;
  /** Share of the gas-scattering rate that is elastic (∝ 1/transverse acceptance). */
  elasticGasFraction: number;
  /** Touschek lifetime at the target current and the initial RF settings, h. */
  touschekLifetimeH: number;
  /** Dynamic momentum acceptance (relative). */
  momentumAcceptance: number;
  /** Transverse acceptance [H, V], mm·mrad: the aperture is √(A·β). */
  acceptanceMmMrad: number[];
  /** Half-widths of the integer and half-integer stopbands, in tune units. */
  stopband: number[];
  /** Below this current (mA) the ring holds no beam. */
  beamThresholdMA: number;
  /** Below this chromaticity (either plane) the head-tail instability loses the stored beam. */
  headTailChromaticity: number;
  /** Orbit drift per kelvin of tunnel temperature at a BPM (rms over BPMs), mm/K. */
  thermalOrbitMmPerK: number;
  /** Insertion-device field-integral error: kick per peak field squared, mrad/T². */
  idKickMradPerT2: number;
  idPeriodMm: number;
  idLengthM: number;
  /** Dipole-error kicks (girders, magnet alignment): how many per plane, and their rms, mrad. */
  errorSources: number;
  errorKickMrad: number;
  /** rms of the slow wander of those kicks (ground and temperature), mrad. */
  driftKickMrad: number;
  /** rms electrical offset of a ring BPM, mm. */
  bpmOffsetMm: number;
  /** Amplitude of the betatron oscillation a turn-by-turn acquisition records, mm at ⟨β⟩. */
  tbtAmplitudeMm: number;
}

/** The injector chain from the linac to the ring. */
export interface InjectorSpec {
  /** Booster extraction energy at the initial dipole current, MeV. */
  boosterEnergyMeV: number;
  /** Ring energy acceptance for injected beam, % (gaussian width). */
  ringEnergyAcceptancePct: number;
  /** Trajectory tolerance at the injection BPMs, mm rms (gaussian width). */
  orbitToleranceMm: number;
  /** The BPMs whose trajectory the injection efficiency depends on. */
  injectionBpms: string[];
}

/** The whole facility definition file. */
export interface FacilitySpec {
  name: string;
  linac: {
    energyMeV: number;
    amplitudePct: number;
    detuneDeg: number[];
    energyNoiseMeV: number;
    energyAcceptanceMeV: number;
    injectionEfficiencyPct: number;
  };
  optics: Record<string, OpticsSpec>;
  ring: RingSpec;
  injector: InjectorSpec;
  orbitOffsetMm: number;
  people: Record<string, string[]>;
  families: FamilySpec[];
}

/** One device of the simulated facility, with everything the physics needs. */
export interface DeviceDef {
  readonly name: string;
  readonly info: DeviceInfo;
  /** The name without the signal suffix, e.g. `LINAC:COR:H01`. */
  readonly prefix: string;
  readonly suffix: string;
  /** Numeric part of the id (1-based); 0 for singletons. */
  readonly index: number;
  /** H for horizontal correctors and X signals, V for vertical and Y. */
  readonly plane: "H" | "V" | "";
  readonly role: string;
  readonly section: string;
  readonly spec: SignalSpec;
  readonly model: string;
  /** Hash of the name: the per-device key of every random number. */
  readonly key: number;
  readonly periodMs: number;
  readonly labelSeverity: ReadonlyMap<string, Severity>;
  /** The resolved `of` device, when the model follows another device. */
  readonly source: DeviceDef | undefined;
}

/** The expanded namespace. */
export interface Facility {
  readonly spec: FacilitySpec;
  /** Sorted by name. */
  readonly devices: readonly DeviceDef[];
  readonly byName: ReadonlyMap<string, DeviceDef>;
  /**
   * The catalogue's devices (all of them, unless the facility was grown with
   * generated arcs): what the physics builds its tables from.
   */
  readonly catalogue: readonly DeviceDef[];
}

const TYPES = new Set(["number", "string", "enum", "waveform"]);
const MODELS = new Set([
  "set",
  "rdbk",
  "analog",
  "follow",
  "bpm",
  "tbt",
  "probe",
  "blm",
  "energy",
  "espread",
  "injeff",
  "dcct",
  "lifetime",
  "tune",
  "enum",
  "mode",
  "crew",
  "rfpower",
  "bunchlength",
  "booster",
  "moving",
  "chrom",
  "ringenergy",
  "xbpm",
  "shutter",
  "coolret",
  "screen",
  "intlk",
  "ramp",
  "boostercharge",
  "emittance",
]);

let shared: Facility | undefined;

/** The facility built from the embedded definition (built once, then shared). */
export function defaultFacility(): Facility {
  shared ??= buildFacility(facilityJson);
  return shared;
}

/** Expands a facility definition; throws on an inconsistent definition. */
export function buildFacility(spec: FacilitySpec): Facility {
  type Mutable = { -readonly [K in keyof DeviceDef]: DeviceDef[K] };
  const defs: Mutable[] = [];
  for (const family of spec.families) {
    for (const id of familyIds(family)) {
      const prefix = family.prefix.replace("{id}", id.text);
      for (const raw of family.signals) {
        const signal: SignalSpec = { ...family.defaults, ...raw };
        defs.push(makeDef(family, signal, prefix, id));
      }
    }
  }
  defs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map<string, DeviceDef>();
  for (const def of defs) {
    if (byName.has(def.name)) throw new Error(`Duplicate device name ${def.name}`);
    byName.set(def.name, def);
  }
  for (const def of defs) {
    const of = def.spec.of;
    if (of === undefined) continue;
    const source = byName.get(`${def.prefix}:${of}`) ?? byName.get(of);
    if (source === undefined) throw new Error(`${def.name}: source "${of}" does not exist`);
    def.source = source;
    // The catalogue names a setpoint's readback device (the executor confirms writes with it).
    if (def.model === "rdbk") source.info.readback = def.name;
  }
  return { spec, devices: defs, byName, catalogue: defs };
}

interface Id {
  text: string;
  index: number;
  letter: string;
}

function familyIds(family: FamilySpec): Id[] {
  const ids = family.ids;
  if (ids === undefined) return [{ text: "", index: 0, letter: "" }];
  const out: Id[] = [];
  for (const letter of ids.letters ?? [""]) {
    for (let i = ids.from; i <= ids.to; i++) {
      out.push({ text: letter + String(i).padStart(ids.width, "0"), index: i, letter });
    }
  }
  return out;
}

function makeDef(family: FamilySpec, signal: SignalSpec, prefix: string, id: Id) {
  const name = signal.suffix === "" ? prefix : `${prefix}:${signal.suffix}`;
  const type = signal.type ?? "number";
  const model = signal.model ?? "analog";
  if (!TYPES.has(type)) throw new Error(`${name}: unknown type "${type}"`);
  if (!MODELS.has(model)) throw new Error(`${name}: unknown model "${model}"`);
  if (type === "enum" && (signal.labels === undefined || signal.labels.length === 0)) {
    throw new Error(`${name}: enum without labels`);
  }
  const plane = id.letter === "H" || id.letter === "V"
    ? id.letter
    : /(^|:)X$/.test(signal.suffix)
    ? "H"
    : /(^|:)Y$/.test(signal.suffix)
    ? "V"
    : "";
  const info: DeviceInfo = {
    device: name,
    exists: true,
    description: describe(family, signal, id),
    units: signal.units ?? "",
    writable: signal.writable === true,
    type: type as DeviceInfo["type"],
    subsystem: name.split(":")[0] ?? name,
  };
  const [min, max] = signal.limits ?? [];
  if (min !== undefined && max !== undefined) info.limits = { min, max };
  if (signal.alarm !== undefined) info.alarm = { ...signal.alarm };
  if (signal.prec !== undefined) info.precision = signal.prec;
  if (signal.labels !== undefined) info.labels = [...signal.labels];
  return {
    name,
    info,
    prefix,
    suffix: signal.suffix,
    index: id.index,
    plane,
    role: family.role ?? "",
    section: family.section ?? "",
    spec: signal,
    model,
    key: hashString(name),
    periodMs: (signal.period ?? 10) * 1000,
    labelSeverity: labelSeverities(name, signal),
    source: undefined as DeviceDef | undefined,
  } satisfies DeviceDef;
}

function describe(family: FamilySpec, signal: SignalSpec, id: Id): string {
  const cell = family.perCell ? String(Math.ceil(id.index / family.perCell)).padStart(2, "0") : "";
  const plane = id.letter === "H" ? "horizontal" : id.letter === "V" ? "vertical" : "";
  const text = signal.desc === "" ? family.desc : `${family.desc} ${signal.desc}`;
  return text.replace("{id}", id.text).replace("{n}", String(id.index)).replace("{cell}", cell)
    .replace("{plane}", plane);
}

function labelSeverities(name: string, signal: SignalSpec): Map<string, Severity> {
  const out = new Map<string, Severity>();
  for (const [label, severity] of Object.entries(signal.severity ?? {})) {
    const known = SEVERITY_ORDER.find((s) => s === severity);
    if (known === undefined) throw new Error(`${name}: unknown severity "${severity}"`);
    out.set(label, known);
  }
  return out;
}
