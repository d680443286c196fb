/**
 * The `[epics]` and `[tango]` tables: where the facility's services are,
 * how long to wait for them, and the names of the environment variables
 * that hold credentials (never the credentials themselves).
 *
 * @module
 */
import { z } from "zod";

/** An http(s) URL, or "" for a service that is not there. */
const serviceUrl = z.union([
  z.literal(""),
  // Credentials in a URL would end up in every error message and in the config file.
  z.url({ protocol: /^https?$/ }).refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), {
    message:
      "has credentials in it; name the variables that hold them in username_env / password_env",
  }),
]).default("");
/** A duration in milliseconds: at most one hour, far inside what a timer holds. */
const MAX_MS = 3_600_000;
const ms = (dflt: number) => z.int().positive().max(MAX_MS).default(dflt);
const MiB = 1024 * 1024;
/** A response-size cap in bytes: at least 1 KiB. */
const bytes = (dflt: number) => z.int().min(1024).default(dflt);
/** How often the device index re-reads a name service: 0 (only on demand) up to a week. */
const refreshS = z.int().min(0).max(7 * 86_400).default(3600);
/** Most names one index walk takes in; past it the walk fails, naming the key. */
const maxNames = z.int().min(1).max(5_000_000).default(1_000_000);

export const EpicsConfigSchema = z.strictObject({
  pvws_url: serviceUrl,
  pvget: z.enum(["auto", "on", "off"]).default("auto"),
  pv_prefix: z.string().default(""),
  archiver_url: serviceUrl,
  channelfinder_url: serviceUrl,
  olog_url: serviceUrl,
  alarm_logger_url: serviceUrl,
  username_env: z.string().default(""),
  password_env: z.string().default(""),
  read_timeout_ms: ms(5000),
  write_timeout_ms: ms(5000),
  write_tolerance: z.number().nonnegative().default(1e-6),
  connect_timeout_ms: ms(5000),
  reconnect_min_ms: ms(250),
  reconnect_max_ms: ms(10_000),
  monitor_linger_ms: z.int().min(0).max(MAX_MS).default(1000),
  http_timeout_ms: ms(10_000),
  /** Largest response body read from each service; a longer one fails the call. */
  archiver_max_bytes: bytes(64 * MiB),
  channelfinder_max_bytes: bytes(16 * MiB),
  olog_max_bytes: bytes(16 * MiB),
  alarm_logger_max_bytes: bytes(16 * MiB),
  pvget_max_bytes: bytes(4 * MiB),
  /** Largest pvws WebSocket message; a longer one closes the socket and fails the reads. */
  // Deno's WebSocket refuses a message above 64 MiB before it is seen: no higher cap can hold.
  pvws_max_frame_bytes: z.int().min(1024).max(64 * MiB).default(16 * MiB),
  /** The device index re-reads ChannelFinder (or the archiver's PV list) this often, seconds. */
  index_refresh_s: refreshS,
  /** Most channels the device index takes from ChannelFinder or the archiver. */
  index_max_channels: maxNames,
});

export const TangoConfigSchema = z.strictObject({
  rest_url: serviceUrl,
  api_version: z.enum(["v11", "v10", "rc4"]).default("v11"),
  tango_host: z.string().regex(/^[^/:\s]+(:\d+)?$/).default("localhost:10000"),
  username_env: z.string().default("TANGO_REST_USER"),
  password_env: z.string().default("TANGO_REST_PASSWORD"),
  timeout_ms: ms(10_000),
  /** Largest response body read from the REST server; a longer one fails the call. */
  max_bytes: bytes(16 * MiB),
  /** The device index re-reads the device and attribute lists this often, seconds. */
  index_refresh_s: refreshS,
  /** Most attributes the device index takes from the REST server. */
  index_max_attributes: maxNames,
});
