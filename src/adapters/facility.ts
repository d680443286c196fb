/**
 * The real-facility backends built from the `[epics]` and `[tango]` tables,
 * with credentials read from the environment variables those tables name.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import type { ControlSystem } from "./adapter.ts";
import { createEpics } from "./epics/mod.ts";
import { basicAuth, readEnv } from "./http.ts";
import { createTango } from "./tango/mod.ts";

/** Opens the EPICS or TANGO backend the config selects. */
export function facilityBackend(
  config: Config,
  env: (name: string) => string | undefined = readEnv,
): ControlSystem {
  if (config.facility.adapter === "tango") {
    const t = config.tango;
    return createTango({
      restUrl: t.rest_url,
      apiVersion: t.api_version,
      tangoHost: t.tango_host,
      authorization: basicAuth(env, t.username_env, t.password_env),
      timeoutMs: t.timeout_ms,
      maxBytes: t.max_bytes,
    });
  }
  const e = config.epics;
  return createEpics({
    pvwsUrl: e.pvws_url || undefined,
    pvget: e.pvget,
    pvPrefix: e.pv_prefix,
    archiverUrl: e.archiver_url || undefined,
    channelFinderUrl: e.channelfinder_url || undefined,
    ologUrl: e.olog_url || undefined,
    alarmLoggerUrl: e.alarm_logger_url || undefined,
    authorization: basicAuth(env, e.username_env, e.password_env),
    readTimeoutMs: e.read_timeout_ms,
    writeTimeoutMs: e.write_timeout_ms,
    writeTolerance: e.write_tolerance,
    connectTimeoutMs: e.connect_timeout_ms,
    reconnectMinMs: e.reconnect_min_ms,
    reconnectMaxMs: e.reconnect_max_ms,
    monitorLingerMs: e.monitor_linger_ms,
    httpTimeoutMs: e.http_timeout_ms,
    maxBytes: {
      archiver: e.archiver_max_bytes,
      channelfinder: e.channelfinder_max_bytes,
      olog: e.olog_max_bytes,
      alarm: e.alarm_logger_max_bytes,
      pvget: e.pvget_max_bytes,
    },
    pvwsMaxFrameBytes: e.pvws_max_frame_bytes,
  });
}
