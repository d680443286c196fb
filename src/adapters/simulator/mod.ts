/**
 * The simulated facility: the default {@link ControlSystem}, so the program
 * runs with no facility at all. A linac, transfer line and storage ring of a
 * few thousand devices whose readings follow the setpoints through simple,
 * seeded physics, with an e-log, alarm log and archive that tell the same
 * story of RF trips, vacuum bursts and injection trouble.
 *
 * @example
 * ```ts
 * import { createSimulator } from "./mod.ts";
 * import { ManualClock } from "../clock.ts";
 *
 * const sim = createSimulator({ seed: 1, clock: new ManualClock(Date.parse("2025-03-04T08:00:00Z")) });
 * const [x] = await sim.read(["LINAC:BPM:05:X"]);
 * await sim.write("LINAC:COR:H01:SETPT", 0.5);
 * ```
 *
 * @module
 */

import type { ArchiveQuery, ControlSystem, DeviceQuery, LogQuery } from "../adapter.ts";
import type { DeviceInfo, DevicePage, LogEntry, Reading, Series, Value } from "../adapter.ts";
import { type Clock, systemClock } from "../clock.ts";
import { archiveSeries, DEFAULT_MAX_POINTS } from "../../facility/archive.ts";
import { defaultFacility, type Facility } from "../../facility/facility.ts";
import { IncidentBook } from "../../facility/incidents.ts";
import { scaledFacility } from "../../facility/scale.ts";
import { LogService, parseTime } from "./logs.ts";
import { type PostedEntries, withPosted } from "./posted.ts";
import { Physics } from "../../facility/physics.ts";
import { copyInfo, familyHint, searchDevices, suggest } from "./search.ts";
import type { DeviceIndex } from "../../index/device_index.ts";
import { checkWrite, SetpointStore } from "../../facility/state.ts";
import { PastSetpoints } from "../../facility/routine.ts";
import { Corrections } from "../../facility/corrections.ts";
import { buildFault, type FaultSpec } from "../../facility/faults.ts";
import { sleep, type Timers } from "../../util/misc.ts";
import { namingFor, requireCanonical } from "../device_names.ts";
import { beamDevices, ownDevices } from "./watched.ts";

/** The simulator's names are EPICS names, under EPICS' rules. */
const NAMING = namingFor("simulator");

export { DEFAULT_MAX_POINTS } from "../../facility/archive.ts";
export { DEFAULT_LOG_LIMIT, MAX_SCAN_SHIFTS } from "./logs.ts";
export { DEFAULT_PAGE_SIZE } from "./search.ts";
export type { FaultSpec } from "../../facility/faults.ts";

/** Options of {@link createSimulator}. */
export interface SimulatorOptions {
  /** Integer seed of every random choice (default 1): same seed, same facility and history. */
  seed?: number;
  /** Time source (default: the system clock). Tests pass a `ManualClock`. */
  clock?: Clock;
  /** Artificial delay of every call, in ms (default 0), for benchmarks; aborted by the signal. */
  latencyMs?: number;
  /** The timers of that delay (default: the real ones). Tests pass fake ones. */
  timers?: Timers;
  /**
   * A span (epoch ms) the facility's own incidents leave alone: its history
   * there is routine work only (a graded task's faults are then all there is).
   */
  quiet?: { from: number; to: number };
  /** Grow the facility with generated arcs to at least this many devices (scale.ts). */
  devices?: number;
  /**
   * The device index over this facility that the program already keeps (cached, with the site's
   * synonyms), so `search` does not build a second one; default: one built on the first search.
   */
  index?: (signal?: AbortSignal) => Promise<DeviceIndex>;
  /** The simulator's own logbook: entries operators posted, shown in its e-log. */
  posted?: PostedEntries;
}

/** What a clone shares with the simulator it was made from: everything but the state. */
interface Shared {
  readonly facility: Facility;
  readonly physics: Physics;
  readonly logService: LogService;
  readonly setpoints: SetpointStore;
}

/**
 * The simulated facility. Writes (and faults added with {@link Simulator.addFault})
 * are the only way its state changes; {@link Simulator.clone} copies the state.
 */
export class Simulator implements ControlSystem {
  readonly kind = "simulator";
  readonly seed: number;
  readonly facility: Facility;
  private readonly clock: Clock;
  private readonly latencyMs: number;
  private readonly timers?: Timers;
  private readonly index: SimulatorOptions["index"];
  private readonly physics: Physics;
  private readonly setpoints: SetpointStore;
  private readonly logService: LogService;
  private readonly posted?: PostedEntries;
  /** False on a noiseless copy: reads give the noise-free values (a prediction's). */
  private readonly noisy: boolean = true;
  private closed = false;

  constructor(options: SimulatorOptions = {}, shared?: Shared, noisy = true) {
    this.seed = options.seed ?? 1;
    this.clock = options.clock ?? systemClock;
    this.latencyMs = Math.max(0, options.latencyMs ?? 0);
    this.timers = options.timers;
    this.index = options.index;
    this.posted = options.posted;
    this.noisy = noisy;
    if (shared !== undefined) {
      this.facility = shared.facility;
      this.physics = shared.physics;
      this.logService = shared.logService;
      this.setpoints = shared.setpoints;
      return;
    }
    this.facility = options.devices === undefined
      ? defaultFacility()
      : scaledFacility(options.devices);
    const people = this.facility.spec.people;
    const book = new IncidentBook(this.seed, people["operators"] ?? [], options.quiet);
    this.physics = new Physics(this.facility, this.seed, book);
    // The crews' routine work is the setpoints' past; live writes go on top of it.
    const corrections = new Corrections(this.physics);
    const past = new PastSetpoints(book, this.physics.initial, corrections);
    this.setpoints = new SetpointStore(this.physics.initial, past);
    // The logs describe the machine as generated, so they do not depend on later writes.
    this.logService = new LogService(this.physics, past, book, people, corrections);
  }

  /**
   * A copy of this facility as it is now — its writes and faults so far — that
   * runs the same physics from the same history. Writes and faults added to
   * the copy do not reach this simulator, nor the other way round; `clock`
   * (default: this one's) is the copy's time, `latencyMs` (default: this
   * one's) the delay of its calls, and a `noiseless` copy reads every device
   * without its noise (what a prediction compares with alarm thresholds).
   */
  clone(options: { clock?: Clock; latencyMs?: number; noiseless?: boolean } = {}): Simulator {
    return new Simulator(
      {
        seed: this.seed,
        clock: options.clock ?? this.clock,
        latencyMs: options.latencyMs ?? this.latencyMs,
        timers: this.timers,
        index: this.index,
      },
      {
        facility: this.facility,
        physics: this.physics,
        logService: this.logService,
        setpoints: this.setpoints.clone(),
      },
      options.noiseless === true ? false : this.noisy,
    );
  }

  /**
   * What a prediction of writes to `written` watches (see `watched.ts`): the
   * beam's devices with alarm limits, the tunes and chromaticities, and the
   * written devices' own readbacks, temperatures and states.
   */
  watchedBy(written: readonly string[]): string[] {
    const own = written.flatMap((w) => ownDevices(this.facility, w));
    return [...new Set([...beamDevices(this.facility), ...own])];
  }

  /** This simulator's time (epoch ms): where a prediction's copy starts. */
  now(): number {
    return this.clock.now();
  }

  /** The written devices' own readbacks, power-supply temperatures and states. */
  ownOf(written: readonly string[]): string[] {
    return written.flatMap((w) => ownDevices(this.facility, w));
  }

  /** Why the ring can hold no beam now (RF, aperture, resonance, instability…), if it cannot. */
  lossReason(): string | undefined {
    return this.physics.beam.conditions(this.clock.now(), this.setpoints).lossReason;
  }

  /** The noise of a device's readings (its σ, in its units); 0 when it has none or is unknown. */
  noiseOf(name: string): number {
    return this.facility.byName.get(name)?.spec.sigma ?? 0;
  }

  /**
   * Adds a fault (a trip, a burst, a failed supply…) from its time on: the
   * physics works out what follows, and the alarm log holds what it raises.
   * Throws a RangeError for a device the facility does not have.
   */
  addFault(spec: FaultSpec): void {
    this.setpoints.addFault(buildFault(spec, this.physics, this.setpoints));
  }

  /** The model behind the readings (lattice, optics, stored beam), for tests and tools. */
  get model(): Physics {
    return this.physics;
  }

  /** Number of devices in the namespace. */
  get deviceCount(): number {
    return this.facility.devices.length;
  }

  /** RF phase (deg) at which DIAG:ENERGY:MEAS peaks for this seed: the answer to a phase scan. */
  get onCrestPhaseDeg(): number {
    return this.physics.injection.onCrestDeg;
  }

  /**
   * Orbit response (mm/mrad) of a BPM position (`LINAC:BPM:05:X`) to a corrector
   * (`LINAC:COR:H01` or its `:SETPT`) now (in the ring, at the live tune); 0 when
   * the corrector does not reach the BPM.
   */
  responseCoefficient(bpm: string, corrector: string): number {
    const setpoint = corrector.endsWith(":SETPT") ? corrector : `${corrector}:SETPT`;
    const b = this.facility.byName.get(bpm);
    const c = this.facility.byName.get(setpoint);
    if (b === undefined || c === undefined) return 0;
    return this.physics.response(b, c, this.clock.now(), this.setpoints);
  }

  async read(names: string[], signal?: AbortSignal): Promise<Reading[]> {
    await this.enter(signal);
    const now = this.clock.now();
    const timestamp = new Date(now).toISOString();
    return names.map((name): Reading => {
      const def = this.facility.byName.get(name);
      if (def === undefined) {
        const error = this.unknown(name);
        return {
          device: name,
          value: null,
          units: "",
          timestamp,
          severity: "INVALID",
          status: "NOT_FOUND",
          ok: false,
          error,
        };
      }
      const value = this.physics.value(def, now, this.setpoints, this.noisy);
      return {
        device: name,
        value,
        units: def.info.units,
        timestamp,
        ...this.physics.alarm(def, now, this.setpoints, value),
        ok: true,
      };
    });
  }

  async write(name: string, value: Value, signal?: AbortSignal): Promise<void> {
    requireCanonical(NAMING, name);
    await this.enter(signal);
    const def = this.facility.byName.get(name);
    if (def === undefined) throw new Error(this.unknown(name));
    this.setpoints.set(def, this.clock.now(), checkWrite(this.facility, def, value));
  }

  async describe(names: string[], signal?: AbortSignal): Promise<DeviceInfo[]> {
    await this.enter(signal);
    return names.map((name) =>
      copyInfo(
        this.facility.byName.get(name)?.info ?? {
          device: name,
          exists: false,
          description: this.unknown(name),
          units: "",
          writable: false,
          type: "number",
          subsystem: name.split(":")[0] ?? name,
        },
      )
    );
  }

  async search(q: DeviceQuery, signal?: AbortSignal): Promise<DevicePage> {
    await this.enter(signal);
    return searchDevices(this.facility, q, await this.index?.(signal));
  }

  /** Newest first; throws a RangeError for an unparsable time. */
  async logs(q: LogQuery, signal?: AbortSignal): Promise<LogEntry[]> {
    await this.enter(signal);
    const now = this.clock.now();
    const generated = this.logService.query(q, now, this.setpoints);
    if (q.source !== "elog" || !this.posted) return generated;
    return withPosted(generated, await this.posted.entries(), q, now);
  }

  /** Throws a RangeError for an unparsable time; unknown devices come back `ok: false`. */
  async archive(q: ArchiveQuery, signal?: AbortSignal): Promise<Series[]> {
    await this.enter(signal);
    const from = parseTime("from", q.from);
    const to = parseTime("to", q.to);
    return q.devices.map((name) => {
      const def = this.facility.byName.get(name);
      if (def === undefined) {
        return {
          device: name,
          units: "",
          samples: [],
          ok: false,
          error: `not archived: ${this.unknown(name)}`,
        };
      }
      signal?.throwIfAborted();
      return archiveSeries(
        this.physics,
        this.setpoints,
        def,
        from,
        to,
        q.maxPoints ?? DEFAULT_MAX_POINTS,
        this.clock.now(),
      );
    });
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private async enter(signal: AbortSignal | undefined): Promise<void> {
    if (this.closed) throw new Error("The simulator is closed");
    signal?.throwIfAborted();
    if (this.latencyMs > 0) await sleep(this.latencyMs, signal, this.timers);
  }

  /** One line: what is wrong and what the caller might have meant. */
  private unknown(name: string): string {
    const close = suggest(this.facility, name);
    if (close.length > 0) return `Unknown device "${name}"; did you mean ${close.join(", ")}?`;
    const hint = familyHint(this.facility, name);
    return hint ? `Unknown device "${name}"; see search "${hint}"` : `Unknown device "${name}"`;
  }
}

/** Creates the simulated facility (seed 1, system clock, no latency unless told). */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  return new Simulator(options);
}
