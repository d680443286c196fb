/**
 * `get_parameter`: live values of one or many devices in one batched read.
 *
 * @module
 */
import { z } from "zod";
import type { Reading, Severity, Value } from "../adapters/adapter.ts";
import { defineTool } from "./define.ts";
import { round6 } from "../util/misc.ts";
import { DeviceName } from "../plan_model/plan.ts";

const Parameters = z.strictObject({
  devices: z.array(DeviceName).min(1).max(200).describe(
    'Exact device names, e.g. ["LINAC:BPM:01:X", "RF:PHASE:SETPT"]; use search_device to find names',
  ),
});

/** A waveform too long to list: its length, range, mean and both ends. */
export interface WaveformSummary {
  waveform: true;
  length: number;
  min: number;
  max: number;
  mean: number;
  first: number[];
  last: number[];
}

/** One device's value as the model reads it. */
export interface CompactReading {
  device: string;
  value: Exclude<Value, number[]> | number[] | WaveformSummary | null;
  units: string;
  time: string;
  severity: Severity;
  status: string;
}

/** What `get_parameter` returns: the values read, and each device that could not be. */
export interface GetParameterResult {
  readings: CompactReading[];
  errors?: { device: string; error: string | undefined }[];
}

/** Waveforms longer than this are summarised instead of listed. */
const WAVEFORM_SHOWN = 16;

export const getParameter = defineTool<typeof Parameters, GetParameterResult>({
  name: "get_parameter",
  description:
    "Read the live value of one or more devices: value, units, time stamp and alarm severity/status. " +
    "Read several devices in one call rather than one call each.",
  parameters: Parameters,
  readOnly: true,
  outsideText: "facility services (device values and states)",
  async execute({ devices }, { cs, signal }) {
    const readings = await cs.read(devices, signal);
    return {
      readings: readings.filter((r) => r.ok).map(compactReading),
      ...(readings.some((r) => !r.ok)
        ? {
          errors: readings.filter((r) => !r.ok).map((r) => ({ device: r.device, error: r.error })),
        }
        : {}),
    };
  },
});

function compactReading(r: Reading): CompactReading {
  return {
    device: r.device,
    value: compactValue(r.value),
    units: r.units,
    time: r.timestamp,
    severity: r.severity,
    status: r.status,
  };
}

function compactValue(v: Value | null): CompactReading["value"] {
  if (typeof v === "number") return round6(v);
  if (!Array.isArray(v)) return v;
  if (v.length <= WAVEFORM_SHOWN) return v.map(round6);
  let min = Infinity, max = -Infinity, sum = 0;
  for (const x of v) {
    if (x < min) min = x;
    if (x > max) max = x;
    sum += x;
  }
  return {
    waveform: true,
    length: v.length,
    min: round6(min),
    max: round6(max),
    mean: round6(sum / v.length),
    first: v.slice(0, WAVEFORM_SHOWN / 2).map(round6),
    last: v.slice(-WAVEFORM_SHOWN / 2).map(round6),
  };
}
