/**
 * A pvws write, confirmed. The protocol never acknowledges a write (spec
 * §a.2): success is the monitored value reaching the target, failure an
 * `{"type":"error"}` message or the deadline passing with the value
 * elsewhere. Refused locally: read-only PVs, arrays, unknown enum labels.
 *
 * @module
 */
import type { Value } from "../adapter.ts";
import { realTimers, type Timers } from "../../util/misc.ts";
import type { PvState, PvwsClient } from "./pvws.ts";
import { asError } from "../../util/errors.ts";

export interface ConfirmOptions {
  timeoutMs: number;
  /** Relative tolerance for numbers: |v − target| ≤ tolerance × max(1, |target|). */
  tolerance: number;
  signal?: AbortSignal;
  /** The clock of the deadline and of the grace for an unchanged value; default: the real timers. */
  timers?: Timers;
}

/**
 * Sends the write of `value` to `pv` (already acquired, with its first
 * update) and resolves when the value is seen; throws a one-line Error otherwise.
 */
export async function confirmWrite(
  pvws: PvwsClient,
  device: string,
  pv: string,
  value: Value,
  opts: ConfirmOptions,
): Promise<void> {
  const state = pvws.state(pv) ?? {};
  if (state.readonly === true) {
    throw new Error(
      `${device} is read-only at the gateway (or the gateway runs without PV_WRITE_SUPPORT); nothing written`,
    );
  }
  if (Array.isArray(value)) {
    throw new Error(`${device}: the pvws protocol cannot write arrays; nothing written`);
  }
  const wire = wireValue(device, state, value);
  const reached = (s: PvState) => matches(s, wire, opts.tolerance);
  const timers = opts.timers ?? realTimers;
  await new Promise<void>((resolve, reject) => {
    const cleanup: (() => void)[] = [];
    const done = (error?: Error) => {
      for (const c of cleanup) c();
      if (error) reject(error);
      else resolve();
    };
    const timer = timers.setTimeout(() => {
      const now = pvws.state(pv);
      done(
        new Error(
          `write of ${
            JSON.stringify(value)
          } to ${device} not confirmed within ${opts.timeoutMs} ms: ` +
            `the value is still ${now ? shown(now) : "unknown"}; check the device before retrying`,
        ),
      );
    }, opts.timeoutMs);
    cleanup.push(() => timers.clearTimeout(timer));
    cleanup.push(
      pvws.onError((message) => done(new Error(`write to ${device} failed: ${message}`))),
    );
    cleanup.push(pvws.watch(pv, (s, error) => {
      if (error) done(new Error(`write to ${device} not confirmed: ${error.message}`));
      else if (s && reached(s)) done();
    }));
    const onAbort = () => done(opts.signal?.reason ?? new Error("aborted"));
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    cleanup.push(() => opts.signal?.removeEventListener("abort", onAbort));
    try {
      pvws.write(pv, wire);
    } catch (e) {
      return done(asError(e));
    }
    // Already at the target: a monitor posts no update for an unchanged value, so
    // only an error can still come; wait briefly for one, then count it confirmed.
    const now = pvws.state(pv);
    if (now && reached(now)) {
      const grace = timers.setTimeout(() => done(), Math.min(250, opts.timeoutMs));
      cleanup.push(() => timers.clearTimeout(grace));
    }
  });
}

/** Enums are written by index; a label is looked up in the PV's labels. */
function wireValue(
  device: string,
  state: PvState,
  value: number | string | boolean,
): number | string {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (state.vtype === "VEnum" && typeof value === "string") {
    const labels = Array.isArray(state.labels) ? state.labels.map(String) : [];
    const index = labels.indexOf(value);
    if (index < 0) {
      throw new Error(`${device}: "${value}" is not one of its states (${labels.join(", ")})`);
    }
    return index;
  }
  return value;
}

function matches(s: PvState, target: number | string, tolerance: number): boolean {
  if (typeof target === "number") {
    const v = typeof s.value === "number" ? s.value : Number(s.text);
    return Number.isFinite(v) && Math.abs(v - target) <= tolerance * Math.max(1, Math.abs(target));
  }
  return s.text === target || s.value === target;
}

function shown(s: PvState): string {
  return JSON.stringify(s.vtype === "VEnum" ? s.text : s.value ?? s.text ?? null);
}
