/**
 * What a control system's answers are made of: values and their alarm
 * severities, the static facts about a device, log entries and archived
 * samples. The adapters speak it to the rest of the program
 * (`adapters/adapter.ts` re-exports it) and the simulated facility
 * (`facility/`) computes in it.
 *
 * @module
 */

/** Alarm severity, normalised across EPICS, TANGO and the simulator. */
export type Severity = "NONE" | "MINOR" | "MAJOR" | "INVALID";

/** A value a device can hold. Arrays are waveforms. */
export type Value = number | string | boolean | number[];

/** Alarm thresholds in engineering units; any may be absent. */
export interface AlarmLimits {
  lolo?: number;
  low?: number;
  high?: number;
  hihi?: number;
}

/** Static facts about one device. */
export interface DeviceInfo {
  device: string;
  /** False when the device does not exist; the other fields are then placeholders. */
  exists: boolean;
  description: string;
  units: string;
  writable: boolean;
  type: "number" | "string" | "enum" | "waveform";
  /** Native (hardware or record) limits of the value, when known. */
  limits?: { min?: number; max?: number };
  alarm?: AlarmLimits;
  precision?: number;
  /** Enum labels, when `type` is "enum". */
  labels?: string[];
  /** First segment of the name (LINAC, RING, RF, DIAG…) or the backend's equivalent. */
  subsystem: string;
  /**
   * The device that reads this one back, when the backend's catalogue says
   * (the simulator's `:RDBK` signals). The device's own name on TANGO: a
   * read-write attribute's read value is compared with its set value.
   */
  readback?: string;
}

/** Which log to read. */
export type LogSource = "elog" | "alarm";

/** An e-log entry or an alarm-log event, newest first in results. */
export interface LogEntry {
  source: LogSource;
  id: string;
  /** UTC ISO-8601. */
  time: string;
  title: string;
  text: string;
  author?: string;
  logbook?: string;
  devices: string[];
  /** Alarm events: the severity entered; e-log entries: their level mapped to a severity. */
  severity: Severity;
  /** Alarm events: the alarm status ("HIHI", "STATE", …); e-log: the level ("Info", "Problem"…). */
  status?: string;
}

/** One archived point. */
export interface Sample {
  /** UTC ISO-8601. */
  time: string;
  value: number | string | number[];
  severity: Severity;
  /**
   * For a value held from before the range asked for (stamped with the
   * range's start): when it was archived, UTC ISO-8601.
   */
  since?: string;
}

/** The archived history of one device, or why it has none. */
export interface Series {
  device: string;
  units: string;
  samples: Sample[];
  ok: boolean;
  error?: string;
}

/** Severities in rising order, for comparisons. */
export const SEVERITY_ORDER: readonly Severity[] = ["NONE", "MINOR", "MAJOR", "INVALID"];

/** True when `a` is at least as severe as `b`. */
export function severityAtLeast(a: Severity, b: Severity): boolean {
  return SEVERITY_ORDER.indexOf(a) >= SEVERITY_ORDER.indexOf(b);
}
