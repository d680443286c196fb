/**
 * The site kill switch: a file the facility owns, outside any user's
 * configuration, that can turn every write off. `/etc/accel-agent/site.toml`
 * is always read; `ACCEL_AGENT_SITE_FILE` may name one more. Each can only
 * take writes away: writes are allowed when no site file says otherwise, and
 * off as soon as one says `writes_enabled = false` or cannot be read.
 *
 * @module
 */
import { parse } from "smol-toml";
import { errorMessage } from "../util/errors.ts";
import { forwardConfigs } from "./forward_config.ts";
import type { ForwardConfig } from "./audit_forward.ts";

/** The keys a site file may hold. */
const SITE_KEYS = ["writes_enabled", "reason", "audit_forward"];

/** Where the facility puts its site file. */
export const SITE_FILE = "/etc/accel-agent/site.toml";
/** Names one more site file (tests, a second switch); it never lifts the first. */
export const SITE_FILE_ENV = "ACCEL_AGENT_SITE_FILE";

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
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound && !required) return undefined;
    return off(file, `cannot read the site file (${errorMessage(e).split("\n")[0]})`);
  }
  let raw: Record<string, unknown>;
  try {
    raw = parse(text);
  } catch (e) {
    return off(file, `not valid TOML (${errorMessage(e).split("\n")[0]})`);
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

/**
 * The collectors every readable site file names, read synchronously (for
 * the network grant). A file that cannot be read or is not valid gives
 * none here (the kill switch counts it as off).
 */
export function siteCollectorsSync(env: (name: string) => string | undefined): ForwardConfig[] {
  const files = [SITE_FILE, env(SITE_FILE_ENV)?.trim()].filter((f): f is string => !!f);
  return files.flatMap((file) => {
    try {
      const found = forwardConfigs(parse(Deno.readTextFileSync(file)).audit_forward);
      return typeof found === "string" ? [] : found;
    } catch {
      return [];
    }
  });
}

function off(file: string, error: string): SiteSwitch {
  return { file, writesEnabled: false, error };
}
