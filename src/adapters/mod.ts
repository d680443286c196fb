/**
 * Chooses the control system the configuration names.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import type { ControlSystem } from "./adapter.ts";
import type { Clock } from "./clock.ts";
import { createSimulator } from "./simulator/mod.ts";

export type { ControlSystem } from "./adapter.ts";

/**
 * Opens the configured backend. The EPICS and TANGO clients (and their reply
 * schemas) are loaded only when one of them is configured, so the simulator's
 * start-up does not pay for them.
 */
export async function openControlSystem(config: Config, clock?: Clock): Promise<ControlSystem> {
  switch (config.facility.adapter) {
    case "simulator":
      return createSimulator({
        seed: config.simulator.seed,
        latencyMs: config.simulator.latency_ms,
        ...(config.simulator.devices === undefined ? {} : { devices: config.simulator.devices }),
        clock,
      });
    case "epics":
    case "tango":
      return (await import("./facility.ts")).facilityBackend(config);
  }
}

/**
 * A control system opened on first use, so start-up (the REPL's first
 * prompt, `--help`) does not pay for building the simulator or connecting.
 */
export function openLazily(
  kind: string,
  open: () => ControlSystem | Promise<ControlSystem>,
): ControlSystem {
  let cs: Promise<ControlSystem> | undefined;
  const get = () => (cs ??= Promise.resolve().then(open));
  return {
    kind,
    read: async (names, signal) => (await get()).read(names, signal),
    write: async (name, value, signal) => (await get()).write(name, value, signal),
    describe: async (names, signal) => (await get()).describe(names, signal),
    search: async (q, signal) => (await get()).search(q, signal),
    logs: async (q, signal) => (await get()).logs(q, signal),
    archive: async (q, signal) => (await get()).archive(q, signal),
    close: async () => {
      if (cs) await (await cs.catch(() => undefined))?.close();
    },
  };
}
