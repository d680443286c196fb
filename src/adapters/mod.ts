/**
 * Chooses the control system the configuration names.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import type { ControlSystem } from "./adapter.ts";
import type { Clock } from "./clock.ts";
import { createSimulator } from "./simulator/mod.ts";
import { facilityBackend } from "./facility.ts";

export type { ControlSystem } from "./adapter.ts";

/** Opens the configured backend. */
export function openControlSystem(config: Config, clock?: Clock): ControlSystem {
  switch (config.facility.adapter) {
    case "simulator":
      return createSimulator({
        seed: config.simulator.seed,
        latencyMs: config.simulator.latency_ms,
        clock,
      });
    case "epics":
    case "tango":
      return facilityBackend(config);
  }
}

/**
 * A control system opened on first use, so start-up (the REPL's first
 * prompt, `--help`) does not pay for building the simulator or connecting.
 */
export function openLazily(kind: string, open: () => ControlSystem): ControlSystem {
  let cs: ControlSystem | undefined;
  const get = () => (cs ??= open());
  return {
    kind,
    read: (names, signal) => get().read(names, signal),
    write: (name, value, signal) => get().write(name, value, signal),
    describe: (names, signal) => get().describe(names, signal),
    search: (q, signal) => get().search(q, signal),
    logs: (q, signal) => get().logs(q, signal),
    archive: (q, signal) => get().archive(q, signal),
    close: () => cs?.close() ?? Promise.resolve(),
  };
}
