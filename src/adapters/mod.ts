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
