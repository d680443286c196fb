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
import { arcResponse } from "../../facility/arc_physics.ts";
import { archiveSeries, DEFAULT_MAX_POINTS } from "../../facility/archive.ts";
import { defaultFacility, type Facility } from "../../facility/facility.ts";
import { IncidentBook } from "../../facility/incidents.ts";
import { scaledFacility } from "../../facility/scale.ts";
import { LogService, parseTime } from "./logs.ts";
import { Physics } from "../../facility/physics.ts";
import { copyInfo, familyHint, searchDevices, suggest } from "./search.ts";
import type { DeviceIndex } from "../../index/device_index.ts";
import { checkWrite, SetpointStore } from "../../facility/state.ts";
import { PastSetpoints } from "../../facility/routine.ts";
import { sleep, type Timers } from "../../util/misc.ts";

export { DEFAULT_MAX_POINTS } from "../../facility/archive.ts";
export { DEFAULT_LOG_LIMIT, MAX_SCAN_SHIFTS } from "./logs.ts";
export { DEFAULT_PAGE_SIZE } from "./search.ts";

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
  /** Grow the facility with generated arcs to at least this many devices (scale.ts). */
  devices?: number;
  /**
   * The device index over this facility that the program already keeps (cached, with the site's
   * synonyms), so `search` does not build a second one; default: one built on the first search.
   */
  index?: (signal?: AbortSignal) => Promise<DeviceIndex>;
}

/** The simulated facility. Writes are the only way its state changes. */
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
  private closed = false;

  constructor(options: SimulatorOptions = {}) {
    this.seed = options.seed ?? 1;
    this.clock = options.clock ?? systemClock;
    this.latencyMs = Math.max(0, options.latencyMs ?? 0);
    this.timers = options.timers;
    this.index = options.index;
    this.facility = options.devices === undefined
      ? defaultFacility()
      : scaledFacility(options.devices);
    const people = this.facility.spec.people;
    const book = new IncidentBook(this.seed, people["operators"] ?? []);
    this.physics = new Physics(this.facility, this.seed, book);
    // The crews' routine work is the setpoints' past; live writes go on top of it.
    const past = new PastSetpoints(book, this.physics.initial);
    this.setpoints = new SetpointStore(this.physics.initial, past);
    // The logs describe the machine as generated, so they do not depend on later writes.
    this.logService = new LogService(this.physics, past, book, people);
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
    return this.physics.response(b, c, this.clock.now(), this.setpoints) ||
      arcResponse(b, c, this.seed);
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
      const value = this.physics.value(def, now, this.setpoints);
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
    return this.logService.query(q, this.clock.now());
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
