/**
 * A small control system on a manual clock whose readback devices follow
 * their setpoints as real power supplies do: a first-order lag, a
 * calibration offset, or not at all. For tests of how writes are confirmed.
 *
 * @module
 */
import type {
  ControlSystem,
  DeviceInfo,
  DevicePage,
  LogEntry,
  Reading,
  Series,
  Value,
} from "../../src/adapters/adapter.ts";
import type { ManualClock } from "../../src/adapters/clock.ts";

/** A readback device that follows a setpoint. */
export interface Follower {
  /** The setpoint it reads back. */
  of: string;
  /** Time constant of the lag, ms (0: at once). */
  tauMs?: number;
  /** Added to what it reads (a calibration error). */
  offset?: number;
  /** True: it never moves (a dead readback channel). */
  frozen?: boolean;
}

interface Setpoint {
  value: Value;
  /** The value before the last write, and when that write was. */
  previous: Value;
  at: number;
  /** The value before any write: what a frozen readback keeps reading. */
  initial: Value;
  info?: Partial<DeviceInfo>;
}

export class LaggingControlSystem implements ControlSystem {
  readonly kind = "lagging";
  readonly writes: { device: string; value: Value; at: number }[] = [];
  /** Names read, in order, one entry per name. */
  readonly reads: string[] = [];
  readonly #setpoints = new Map<string, Setpoint>();
  readonly #followers = new Map<string, Follower>();

  constructor(
    readonly clock: ManualClock,
    setpoints: Record<string, Value | { value: Value; info: Partial<DeviceInfo> }>,
    followers: Record<string, Follower> = {},
  ) {
    for (const [name, v] of Object.entries(setpoints)) {
      const { value, info } = typeof v === "object" && !Array.isArray(v)
        ? v
        : { value: v, info: undefined };
      this.#setpoints.set(name, { value, previous: value, at: -Infinity, initial: value, info });
    }
    for (const [name, f] of Object.entries(followers)) this.#followers.set(name, f);
  }

  /** What a readback device reads now. */
  #follow(f: Follower): Value | undefined {
    const sp = this.#setpoints.get(f.of);
    if (!sp) return undefined;
    const off = f.offset ?? 0;
    if (typeof sp.value !== "number" || typeof sp.previous !== "number") return sp.value;
    if (f.frozen) return (sp.initial as number) + off;
    const dt = this.clock.now() - sp.at;
    const tau = f.tauMs ?? 0;
    const w = tau <= 0 || dt === Infinity ? 0 : Math.exp(-dt / tau);
    return sp.value + (sp.previous - sp.value) * w + off;
  }

  read(names: string[]): Promise<Reading[]> {
    this.reads.push(...names);
    const timestamp = new Date(this.clock.now()).toISOString();
    return Promise.resolve(names.map((device): Reading => {
      const f = this.#followers.get(device);
      const value = f ? this.#follow(f) : this.#setpoints.get(device)?.value;
      return value === undefined
        ? {
          device,
          value: null,
          units: "",
          timestamp,
          severity: "INVALID",
          status: "NOT_FOUND",
          ok: false,
          error: `unknown device ${device}`,
        }
        : { device, value, units: "A", timestamp, severity: "NONE", status: "NO_ALARM", ok: true };
    }));
  }

  write(name: string, value: Value): Promise<void> {
    const sp = this.#setpoints.get(name);
    if (!sp) return Promise.reject(new Error(`unknown device ${name}`));
    // The readback starts from where it was: a write mid-lag starts a new lag from the old setpoint.
    this.#setpoints.set(name, { ...sp, previous: sp.value, value, at: this.clock.now() });
    this.writes.push({ device: name, value, at: this.clock.now() });
    return Promise.resolve();
  }

  describe(names: string[]): Promise<DeviceInfo[]> {
    return Promise.resolve(names.map((device): DeviceInfo => {
      const sp = this.#setpoints.get(device);
      const exists = sp !== undefined || this.#followers.has(device);
      return {
        device,
        exists,
        description: exists ? device : `unknown device ${device}`,
        units: "A",
        writable: sp !== undefined,
        type: typeof sp?.value === "string" ? "string" : "number",
        subsystem: device.split(":")[0] ?? device,
        ...sp?.info,
      };
    }));
  }

  search(): Promise<DevicePage> {
    return Promise.reject(new Error("no search here"));
  }
  logs(): Promise<LogEntry[]> {
    return Promise.reject(new Error("no logs here"));
  }
  archive(): Promise<Series[]> {
    return Promise.reject(new Error("no archive here"));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
