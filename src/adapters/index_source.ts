/**
 * The device index's source for the configured real facility: EPICS
 * (ChannelFinder, else the archiver's PV list) or TANGO (the REST API's
 * device and attribute lists). The simulator's namespace is indexed from
 * its device list instead (`simulator/index_source.ts`). The backends'
 * modules load only when one of them is configured, as in `mod.ts`.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import type { IndexSource } from "../index/record.ts";
import type { RefreshingSource } from "./epics/index_source.ts";
import { basicAuth, readEnv, trimBase } from "./http.ts";

export type { RefreshingSource } from "./epics/index_source.ts";

/**
 * The index source of the configured EPICS or TANGO facility; undefined for
 * the simulator. Throws when EPICS has neither ChannelFinder nor the archiver.
 */
export async function facilityIndexSource(
  config: Config,
  env: (name: string) => string | undefined = readEnv,
): Promise<RefreshingSource | undefined> {
  switch (config.facility.adapter) {
    case "simulator":
      return undefined;
    case "tango": {
      const t = config.tango;
      const { TangoIndexSource } = await import("./tango/index_source.ts");
      return new TangoIndexSource({
        svc: {
          label: "TANGO REST",
          base: trimBase(t.rest_url),
          timeoutMs: t.timeout_ms,
          authorization: basicAuth(env, t.username_env, t.password_env),
          maxBytes: t.max_bytes,
          maxBytesKey: "[tango] max_bytes",
        },
        apiVersion: t.api_version,
        tangoHost: t.tango_host,
        maxAttributes: t.index_max_attributes,
        refreshMs: t.index_refresh_s * 1000,
      });
    }
    case "epics": {
      const e = config.epics;
      const { epicsIndexSource } = await import("./epics/index_source.ts");
      return epicsIndexSource({
        channelFinder: e.channelfinder_url
          ? {
            label: "ChannelFinder",
            base: trimBase(e.channelfinder_url),
            timeoutMs: e.http_timeout_ms,
            authorization: basicAuth(env, e.username_env, e.password_env),
            maxBytes: e.channelfinder_max_bytes,
            maxBytesKey: "[epics] channelfinder_max_bytes",
          }
          : undefined,
        archiver: e.archiver_url
          ? {
            label: "archiver",
            base: trimBase(e.archiver_url),
            timeoutMs: e.http_timeout_ms,
            maxBytes: e.archiver_max_bytes,
            maxBytesKey: "[epics] archiver_max_bytes",
          }
          : undefined,
        maxChannels: e.index_max_channels,
        refreshMs: e.index_refresh_s * 1000,
      });
    }
  }
}

/**
 * Whether an index built from `source` at `builtAtMs` is due to be read again
 * at `nowMs`: its `refreshMs` (`index_refresh_s`) has passed. A source
 * without one (the simulator), or with 0, is read again only on demand.
 */
export function refreshDue(source: IndexSource, builtAtMs: number, nowMs: number): boolean {
  const every = "refreshMs" in source && typeof source.refreshMs === "number"
    ? source.refreshMs
    : 0;
  return every > 0 && nowMs - builtAtMs >= every;
}
