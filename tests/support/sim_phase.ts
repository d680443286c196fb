/**
 * The simulated facility's RF phase, for tests of plans that start at its
 * operating point.
 *
 * @module
 */
import { runAsUser } from "./user_grants.ts";

/**
 * Waits until the simulated RF phase is at its operating point: for about ten minutes of some
 * hours the crews' routine RF phase scan steps it through ±10°, and a plan starting at -4° then
 * fails max_step from the live value, as it would on the machine.
 */
export async function phaseAtOperatingPoint(): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const r = await runAsUser(["get", "RF:PHASE:SETPT", "--json"]);
    if (JSON.parse(r.stdout).readings?.[0]?.value === -4) return;
    await new Promise((ok) => setTimeout(ok, 10_000));
  }
  throw new Error("RF:PHASE:SETPT never came back to -4");
}
