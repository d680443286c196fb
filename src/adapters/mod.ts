/**
 * Chooses the control system the configuration names.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import type { ControlSystem } from "./adapter.ts";
import type { Clock } from "./clock.ts";
import { defaultFacility } from "../facility/facility.ts";
import { scaledFacility } from "../facility/scale.ts";
import { simulatorIndexSource } from "./simulator/index_source.ts";
import type { IndexSource } from "../index/record.ts";
import type { DeviceIndex } from "../index/device_index.ts";
import type { PostedEntries } from "./simulator/posted.ts";

export type { ControlSystem } from "./adapter.ts";

/**
 * Opens the configured backend. The EPICS and TANGO clients (and their reply
 * schemas) are loaded only when one of them is configured, so the simulator's
 * start-up does not pay for them.
 */
export async function openControlSystem(
  config: Config,
  clock?: Clock,
  index?: (signal?: AbortSignal) => Promise<DeviceIndex>,
  /** The simulator's own logbook (entries posted to it), shown in its e-log. */
  posted?: PostedEntries,
): Promise<ControlSystem> {
  switch (config.facility.adapter) {
    case "simulator":
      // Loaded here, not at start-up: the physics, logs and archive are many modules.
      return (await import("./simulator/mod.ts")).createSimulator({
        seed: config.simulator.seed,
        latencyMs: config.simulator.latency_ms,
        ...(config.simulator.devices === undefined ? {} : { devices: config.simulator.devices }),
        clock,
        index,
        posted,
      });
    case "epics":
    case "tango":
      return (await import("./facility.ts")).facilityBackend(config);
  }
}

/**
 * The namespace of the configured backend as the device index reads it:
 * the simulator's device list (grown by `[simulator] devices`), ChannelFinder
 * or the archiver's PV list, the TANGO REST API's devices and attributes; or
 * undefined when the backend offers none (searches then use patterns only).
 */
export async function indexSourceFor(config: Config): Promise<IndexSource | undefined> {
  switch (config.facility.adapter) {
    case "simulator": {
      // The facility is built on the first search, not at start-up.
      const devices = config.simulator.devices;
      return simulatorIndexSource(
        devices === undefined ? defaultFacility : () => scaledFacility(devices),
      );
    }
    case "epics":
      // Neither ChannelFinder nor the archiver configured: patterns only, through the gateway.
      if (!config.epics.channelfinder_url && !config.epics.archiver_url) return undefined;
      return await (await import("./index_source.ts")).facilityIndexSource(config);
    case "tango":
      return await (await import("./index_source.ts")).facilityIndexSource(config);
  }
}

/**
 * The facility a configuration names, as one line: the control system's
 * kind and endpoint (the simulator's seed and size; the pvws gateway and
 * PV prefix; the TANGO REST server, API version and Tango host). An
 * approval token is bound to it, so a plan shown against one facility runs
 * on no other that shares the state directory.
 */
export function facilityIdentity(config: Config): string {
  switch (config.facility.adapter) {
    case "simulator": {
      const { seed, devices } = config.simulator;
      return `simulator seed ${seed}${devices === undefined ? "" : ` devices ${devices}`}`;
    }
    case "epics": {
      const { pvws_url, pv_prefix } = config.epics;
      return `epics ${endpoint(pvws_url) || "(no gateway)"}${
        pv_prefix ? ` prefix ${JSON.stringify(pv_prefix)}` : ""
      }`;
    }
    case "tango": {
      const { rest_url, api_version, tango_host } = config.tango;
      return `tango ${endpoint(rest_url)} ${api_version} host ${tango_host.toLowerCase()}`;
    }
  }
}

/** A service URL as one spelling: scheme and host lower case, default port and trailing slash dropped. */
function endpoint(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, "");
  } catch {
    return url;
  }
}

/** A control system opened on first use; `opened()` opens it and gives the adapter itself. */
export interface LazyControlSystem extends ControlSystem {
  opened(): Promise<ControlSystem>;
}

/**
 * A control system opened on first use, so start-up (the REPL's first
 * prompt, `--help`) does not pay for building the simulator or connecting.
 */
export function openLazily(
  kind: string,
  open: () => ControlSystem | Promise<ControlSystem>,
): LazyControlSystem {
  let cs: Promise<ControlSystem> | undefined;
  const get = () => (cs ??= Promise.resolve().then(open));
  return {
    kind,
    opened: get,
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
