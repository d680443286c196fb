/**
 * The kill switches: the site files the facility owns, outside any user's
 * configuration, and the `[safety] writes_enabled` of the config file.
 * `/etc/accel-agent/site.toml` is always read; `ACCEL_AGENT_SITE_FILE` may
 * name one more. Each can only take writes away: writes are allowed when no
 * site file says otherwise, and off as soon as one says
 * `writes_enabled = false` or cannot be read.
 *
 * They are read before every proposal and again before every write of a
 * running plan, so a reading must be cheap and bounded: a file is `stat`ed
 * first and refused when it is not a regular file (a FIFO would block the
 * open, `/dev/zero` never ends), and no more than {@link MAX_SITE_BYTES} are
 * read. Whatever goes wrong turns writes off, with one line saying why.
 *
 * @module
 */
import { parse } from "smol-toml";
import { errorMessage } from "../util/errors.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { readPlainTextSync } from "../util/glance_read.ts";
import { forwardConfigs } from "./forward_config.ts";
import type { ForwardConfig } from "./audit_forward.ts";

/** The keys a site file may hold. */
const SITE_KEYS = ["writes_enabled", "reason", "audit_forward"];

/** Where the facility puts its site file. */
export const SITE_FILE = "/etc/accel-agent/site.toml";
/** Names one more site file (tests, a second switch); it never lifts the first. */
export const SITE_FILE_ENV = "ACCEL_AGENT_SITE_FILE";
/** The largest site file read: it holds two keys; anything bigger is not one. */
export const MAX_SITE_BYTES = 64 * 1024;
/** The largest config file re-read for its switch (as `loadConfig` reads it). */
const MAX_CONFIG_BYTES = 1 << 20;

/** One site file as read. */
export interface SiteSwitch {
  file: string;
  writesEnabled: boolean;
  /** Why the file could not be used (writes are then off). */
  error?: string;
  /** The log collectors its `[audit_forward]` names (see forward_config.ts). */
  collectors?: ForwardConfig[];
}

/**
 * Reads the site files. The default file may be absent (no site switch);
 * a file named by the environment must exist. A file that cannot be read or
 * parsed, or has another key, turns writes off and says why.
 */
export async function readSiteSwitches(
  env: (name: string) => string | undefined,
): Promise<SiteSwitch[]> {
  const out: SiteSwitch[] = [];
  const def = await readSite(SITE_FILE, false);
  if (def) out.push(def);
  const extra = env(SITE_FILE_ENV)?.trim();
  if (extra) out.push((await readSite(extra, true)) as SiteSwitch);
  return out;
}

async function readSite(file: string, required: boolean): Promise<SiteSwitch | undefined> {
  const read = await readBounded(file, MAX_SITE_BYTES, "site file");
  if (read.missing && !required) return undefined;
  if (read.error !== undefined) return off(file, read.error);
  let raw: Record<string, unknown>;
  try {
    raw = parse(read.text);
  } catch (e) {
    return off(file, `not valid TOML (${firstLine(e)})`);
  }
  const keys = Object.keys(raw).filter((k) => !SITE_KEYS.includes(k));
  if (keys.length) return off(file, `unknown key ${keys[0]} (${SITE_KEYS.join(", ")})`);
  const w = raw.writes_enabled ?? true;
  if (typeof w !== "boolean") return off(file, "writes_enabled must be true or false");
  // A facility that asked for an off-console copy and got it wrong writes nothing until it is fixed.
  const collectors = forwardConfigs(raw.audit_forward);
  if (typeof collectors === "string") return off(file, collectors);
  return {
    file,
    writesEnabled: w,
    ...(collectors.length ? { collectors } : {}),
    ...(typeof raw.reason === "string" && !w
      ? { error: `writes_enabled = false: ${raw.reason}` }
      : {}),
  };
}

/** The config file's own switch, read again: `[safety] writes_enabled`, or why it cannot be. */
export interface ConfigSwitch {
  writesEnabled: boolean;
  /** Why the config file could not be read again (writes are then off). */
  error?: string;
}

/**
 * Reads `[safety] writes_enabled` from the config files again: `paths` is
 * the chain as loaded, the shipped defaults first and the operator's file
 * last (undefined or empty: the program runs on built-in defaults, which
 * allow writes). As when the chain was merged, the highest file that sets
 * the key decides, so a switch turned off in a site config the operator's
 * file extends is seen too. Only this key is looked at; the rest was checked
 * at start. A file that is gone, unreadable or no longer valid TOML turns
 * writes off.
 */
export async function readConfigSwitch(
  paths: string | readonly string[] | undefined,
): Promise<ConfigSwitch> {
  const chain = typeof paths === "string" ? [paths] : paths ?? [];
  const read = await Promise.all(chain.map(readOneSwitch));
  const broken = read.find((r) => r.error !== undefined);
  if (broken) return { writesEnabled: false, error: broken.error };
  const set = read.findLast((r) => r.writesEnabled !== undefined);
  return { writesEnabled: set?.writesEnabled ?? true };
}

/** One file's `[safety] writes_enabled` (undefined when it does not set it), or why it cannot be read. */
async function readOneSwitch(
  path: string,
): Promise<{ writesEnabled?: boolean; error?: string }> {
  const read = await readBounded(path, MAX_CONFIG_BYTES, "config file");
  if (read.error !== undefined) return { error: `${path}: ${read.error}` };
  let raw: Record<string, unknown>;
  try {
    raw = parse(read.text);
  } catch (e) {
    return { error: `${path}: no longer valid TOML (${firstLine(e)})` };
  }
  const safety = raw.safety;
  const w = typeof safety === "object" && safety !== null && !Array.isArray(safety)
    ? (safety as Record<string, unknown>).writes_enabled
    : undefined;
  if (w !== undefined && typeof w !== "boolean") {
    return { error: `${path}: [safety] writes_enabled must be true or false` };
  }
  return { writesEnabled: w };
}

type Bounded =
  | { text: string; error?: undefined; missing?: undefined }
  | { error: string; missing: boolean };

/** A small regular file's text, or one line saying why it cannot be had. */
async function readBounded(path: string, max: number, what: string): Promise<Bounded> {
  try {
    return { text: await readRegularText(path, max) };
  } catch (e) {
    const missing = e instanceof Deno.errors.NotFound;
    const why = missing ? "it does not exist" : firstLine(e).replace(`${path}: `, "");
    return { error: `cannot read the ${what} (${why})`, missing };
  }
}

function firstLine(e: unknown): string {
  return errorMessage(e).split("\n")[0] ?? "";
}

/**
 * The collectors every readable site file names, read synchronously (for
 * the network grant). A file that cannot be read or is not valid gives
 * none here (the kill switch counts it as off).
 */
export function siteCollectorsSync(env: (name: string) => string | undefined): ForwardConfig[] {
  const files = [SITE_FILE, env(SITE_FILE_ENV)?.trim()].filter((f): f is string => !!f);
  return files.flatMap((file) => {
    try {
      const found = forwardConfigs(parse(readPlainTextSync(file, MAX_SITE_BYTES)).audit_forward);
      return typeof found === "string" ? [] : found;
    } catch {
      return [];
    }
  });
}

function off(file: string, error: string): SiteSwitch {
  return { file, writesEnabled: false, error };
}
