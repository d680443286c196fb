/**
 * What a recovery checks against the control system: the tolerance each
 * device is held to (its limits entry, else its precision, as preflight
 * gives it), and whether every original device, and the readback device
 * that confirms its writes, reads its original now.
 *
 * @module
 */
import type { ControlReader, Value } from "../../adapters/adapter.ts";
import type { LimitsTable } from "../../safety/limits.ts";
import { DEFAULT_SETTLE_MS, tolerance } from "../preflight.ts";
import { findReadbacks } from "../readback.ts";
import { type NotRestored, notRestored } from "../recovery.ts";

/** A function giving each of `devices` its tolerance (1e-6 for one the control system does not know). */
export async function tolerancesOf(
  cs: Pick<ControlReader, "describe">,
  limits: LimitsTable,
  devices: string[],
  signal?: AbortSignal,
): Promise<(device: string) => number> {
  const infos = await cs.describe(devices, signal);
  const info = new Map(infos.map((d) => [d.device, d]));
  return (device) => {
    const d = info.get(device);
    return d ? tolerance(d, limits.lookup(device)) : 1e-6;
  };
}

/**
 * The original devices not at their originals now, read from the control
 * system: each device, and its readback device where it has one (a device
 * whose setpoint is back but whose readback is not, is not restored).
 */
export async function notAtOriginals(
  cs: ControlReader,
  limits: LimitsTable,
  originals: Record<string, Value | null>,
  signal?: AbortSignal,
): Promise<NotRestored[]> {
  const devices = Object.keys(originals);
  const infos = await cs.describe(devices, signal);
  const known = infos.filter((d) => d.exists);
  const { partners } = await findReadbacks(
    cs,
    known.map((info) => ({ info, limit: limits.lookup(info.device) })),
    DEFAULT_SETTLE_MS,
    signal,
  );
  const by: Record<string, string> = {};
  for (const [device, p] of Object.entries(partners)) {
    if (p.device && p.device !== device) by[device] = p.device;
  }
  const readings = await cs.read([...new Set([...devices, ...Object.values(by)])], signal);
  const info = new Map(infos.map((d) => [d.device, d]));
  const tol = (device: string) => {
    const d = info.get(device);
    return d ? tolerance(d, limits.lookup(device)) : 1e-6;
  };
  return notRestored(originals, readings, tol, by);
}
