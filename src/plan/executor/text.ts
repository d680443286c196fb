/**
 * How the executor words values, confirmations and errors in its results.
 *
 * @module
 */
import { errorMessage } from "../../util/errors.ts";
import type { Value } from "../../adapters/adapter.ts";
import type { Confirmation } from "./types.ts";

/** The result's words for how a write was checked. */
export function confirmationText(c: Confirmation): string {
  if (c.status === "accepted") {
    return `setpoint accepted, no readback device; reads ${show(c.readback)}`;
  }
  const by = c.readValue ? `${c.readbackDevice}'s read value` : c.readbackDevice;
  return `confirmed by ${by} = ${show(c.readback)}`;
}

/** An error's message; "aborted: …" when it is the signal's own reason. */
export function errorText(e: unknown, signal: AbortSignal): string {
  if (signal.aborted && e === signal.reason) {
    const r = signal.reason;
    return r instanceof Error ? `aborted: ${r.message}` : "aborted";
  }
  return errorMessage(e);
}

/** A value read, in a message: "nothing" for none, a waveform by its length. */
export function show(v: Value | null): string {
  return v === null ? "nothing" : Array.isArray(v) ? `[${v.length} values]` : String(v);
}
