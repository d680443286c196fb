/** Shared fixtures for the simulator tests. */

import { ManualClock } from "../../../src/adapters/clock.ts";
import { createSimulator, type Simulator } from "../../../src/adapters/simulator/mod.ts";

/** A Tuesday morning shift change, UTC. */
export const T0 = Date.parse("2025-03-04T08:00:00Z");
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export function iso(t: number): string {
  return new Date(t).toISOString();
}

/** A simulator on a manual clock set to `at`. */
export function simAt(at = T0, seed = 1): { sim: Simulator; clock: ManualClock } {
  const clock = new ManualClock(at);
  return { sim: createSimulator({ seed, clock }), clock };
}

/** The numeric value of a single read, failing the test on anything else. */
export async function readNumber(sim: Simulator, name: string): Promise<number> {
  const [r] = await sim.read([name]);
  if (r === undefined || typeof r.value !== "number") {
    throw new Error(`${name} did not read as a number: ${JSON.stringify(r)}`);
  }
  return r.value;
}
