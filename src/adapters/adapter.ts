/**
 * The only door to a control system. Every backend (the embedded simulator,
 * EPICS through a pvws gateway, TANGO through its REST API) implements
 * {@link ControlSystem}; tools and the plan executor see nothing else.
 *
 * @module
 */

import type {
  DeviceInfo,
  LogEntry,
  LogSource,
  Series,
  Severity,
  Value,
} from "../control/records.ts";

export type {
  AlarmLimits,
  DeviceInfo,
  LogEntry,
  LogSource,
  Sample,
  Series,
  Severity,
  Value,
} from "../control/records.ts";
export { SEVERITY_ORDER, severityAtLeast } from "../control/records.ts";

/** One device's value at one time, or why it could not be read. */
export interface Reading {
  device: string;
  /** Present when `ok`; `null` only when the device is connected but has no value. */
  value: Value | null;
  units: string;
  /** UTC ISO-8601 time stamp of the value (source time, not read time). */
  timestamp: string;
  severity: Severity;
  /** Alarm status text, e.g. "HIGH", "LOLO", "NO_ALARM", "DISCONNECTED". */
  status: string;
  ok: boolean;
  /** Why the read failed, when `ok` is false (unknown device, disconnected, timeout…). */
  error?: string;
}

/** A device search. `pattern` uses `*` and `?` wildcards, matched against the whole name. */
export interface DeviceQuery {
  pattern: string;
  subsystem?: string;
  /** Match only writable (true) or only read-only (false) devices. */
  writable?: boolean;
  /** Backends with a name service (ChannelFinder): property name → glob its value must match. */
  properties?: Record<string, string>;
  /** Backends with a name service: tags (globs) a device must carry. */
  tags?: string[];
  offset?: number;
  limit?: number;
}

/** One page of a device search. */
export interface DevicePage {
  total: number;
  offset: number;
  devices: DeviceInfo[];
  /** Something the reader should know about the page (a service that sent more than asked for). */
  note?: string;
}

export interface LogQuery {
  source: LogSource;
  /** UTC ISO-8601 start, inclusive. */
  from: string;
  /** UTC ISO-8601 end, exclusive. */
  to: string;
  /** Entries that mention this device (exact name or `*` wildcard). */
  device?: string;
  /** Case-insensitive substring of title or text. */
  text?: string;
  /** Minimum severity for alarm entries. */
  minSeverity?: Severity;
  /** At most this many entries, newest first. */
  limit?: number;
}

export interface ArchiveQuery {
  devices: string[];
  /** UTC ISO-8601 start, inclusive. */
  from: string;
  /** UTC ISO-8601 end, exclusive. */
  to: string;
  /** Return at most about this many points per device (server-side binning). */
  maxPoints?: number;
}

/**
 * What every part of the program but the plan executor holds: it reads,
 * describes, searches and looks back, and has no way to write. Tools,
 * sub-agents, CLI commands and preflight see only this; the compiler, not
 * only a test, keeps a write out of their reach.
 */
export interface ControlReader {
  /** Short name of the backend ("simulator", "epics", "tango"). */
  readonly kind: string;
  /** Batched: one round trip where the backend allows. Never throws for one bad device. */
  read(names: string[], signal?: AbortSignal): Promise<Reading[]>;
  describe(names: string[], signal?: AbortSignal): Promise<DeviceInfo[]>;
  search(q: DeviceQuery, signal?: AbortSignal): Promise<DevicePage>;
  logs(q: LogQuery, signal?: AbortSignal): Promise<LogEntry[]>;
  archive(q: ArchiveQuery, signal?: AbortSignal): Promise<Series[]>;
}

/** The whole door, writer included: held by the plan service for its executor, and by whoever closes it. */
export interface ControlSystem extends ControlReader {
  /** Called by the plan executor only. Throws when the write is refused. */
  write(name: string, value: Value, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * A view of `cs` that can only read: an object with the reader's methods and
 * nothing else, so even a cast finds no `write` on it at run time.
 */
export function readOnlyView(cs: ControlReader): ControlReader {
  return Object.freeze({
    kind: cs.kind,
    read: (names: string[], signal?: AbortSignal) => cs.read(names, signal),
    describe: (names: string[], signal?: AbortSignal) => cs.describe(names, signal),
    search: (q: DeviceQuery, signal?: AbortSignal) => cs.search(q, signal),
    logs: (q: LogQuery, signal?: AbortSignal) => cs.logs(q, signal),
    archive: (q: ArchiveQuery, signal?: AbortSignal) => cs.archive(q, signal),
  });
}

/** A `*`/`?` wildcard over a whole name, case-insensitive, matched without backtracking. */
export { wildcard } from "../util/glob.ts";
