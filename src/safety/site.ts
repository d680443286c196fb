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
import { readRegularText } from "../util/bounded_read.ts";

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

/** The largest site file read (it holds two keys). */
const MAX_SITE_BYTES = 64 << 10;

async function readSite(file: string, required: boolean): Promise<SiteSwitch | undefined> {
  let text: string;
  try {
    text = await readRegularText(file, MAX_SITE_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound && !required) return undefined;
    // The reader's refusal names the file, which the switch's line names already.
    const why = errorMessage(e).split("\n")[0]?.replace(`${file}: `, "");
    return off(file, `cannot read the site file (${why})`);
  }
  let raw: Record<string, unknown>;
  try {
    raw = parse(text);
  } catch (e) {
    return off(file, `not valid TOML (${errorMessage(e).split("\n")[0]})`);
  }
  const keys = Object.keys(raw).filter((k) => k !== "writes_enabled" && k !== "reason");
  if (keys.length) return off(file, `unknown key ${keys[0]} (writes_enabled, reason)`);
  const w = raw.writes_enabled ?? true;
  if (typeof w !== "boolean") return off(file, "writes_enabled must be true or false");
  return {
    file,
    writesEnabled: w,
    ...(typeof raw.reason === "string" && !w
      ? { error: `writes_enabled = false: ${raw.reason}` }
      : {}),
  };
}

function off(file: string, error: string): SiteSwitch {
  return { file, writesEnabled: false, error };
}
