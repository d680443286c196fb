/**
 * The tolerance each device is checked to, as preflight gives it (its limits
 * entry, else its precision), for checks made outside a plan: a recovery's
 * verification.
 *
 * @module
 */
import type { ControlReader } from "../../adapters/adapter.ts";
import type { LimitsTable } from "../../safety/limits.ts";
import { tolerance } from "../preflight.ts";

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
