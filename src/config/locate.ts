/**
 * Which configuration file is read (`--config FILE` > `ACCEL_AGENT_CONFIG`
 * > `configs/default.toml` beside the program), kept apart from the schema
 * so a first look at the file (`glance.ts`) need not load it.
 *
 * @module
 */

/** The default configuration file shipped beside the program. */
export const DEFAULT_CONFIG_URL = new URL("../../configs/default.toml", import.meta.url);

export interface LoadOptions {
  /** `--config FILE`, when given. */
  path?: string;
  env: { get(name: string): string | undefined };
  cwd: string;
}

/** The file to read: absolute `path`, `shown` as the operator gave it; undefined when none applies. */
export function configFile(
  opts: LoadOptions,
): { path: string; shown: string; explicit: boolean } | undefined {
  const explicit = opts.path ?? nonEmpty(opts.env.get("ACCEL_AGENT_CONFIG"));
  if (explicit) {
    const path = explicit.startsWith("/") ? explicit : `${opts.cwd}/${explicit}`;
    return { path, shown: explicit, explicit: true };
  }
  if (DEFAULT_CONFIG_URL.protocol !== "file:") return undefined;
  const path = decodeURIComponent(DEFAULT_CONFIG_URL.pathname);
  return { path, shown: path, explicit: false };
}

/** The shipped defaults' path, when the program runs from files (undefined when embedded elsewhere). */
export function defaultConfigPath(): string | undefined {
  return DEFAULT_CONFIG_URL.protocol === "file:"
    ? decodeURIComponent(DEFAULT_CONFIG_URL.pathname)
    : undefined;
}

/** The text trimmed, or undefined when it is empty or blank. */
export function nonEmpty(s: string | undefined): string | undefined {
  return s && s.trim() ? s.trim() : undefined;
}
