/**
 * Checks on the grants before they are given: a directory the program
 * writes may not hold the files that bound it, any user may not replace the
 * limits file, and paths are granted in their resolved form too.
 *
 * @module
 */
import type { LoadedConfig } from "../config/load.ts";
import { isWritableSetting, type NamedPath } from "../config/paths.ts";

/** The site kill switch that is always read (src/safety/site.ts). */
export const SITE_FILE = "/etc/accel-agent/site.toml";

/** `path`, and its resolved form too when a symlink is on the way (Deno checks the path used). */
export function withRealPath(path: string): string[] {
  try {
    const real = Deno.realPathSync(path);
    return real === path ? [path] : [path, real];
  } catch {
    return [path];
  }
}

/**
 * Why a directory the program writes would hold a file that bounds it — a
 * config file of the chain, the limits file or a site file — or undefined:
 * granted writes over it, the program could change its own limits (a
 * `[state] dir = "/"` from any layer of the chain would grant the whole disk).
 */
export function writesOverBounds(
  loaded: LoadedConfig,
  named: NamedPath[],
  site: string,
): string | undefined {
  const bounds = [
    ...(loaded.path ? [{ path: loaded.path, what: "the config file" }] : []),
    ...(loaded.layers ?? []).map((l) => ({ path: l.path, what: "a config file it extends" })),
    ...named.filter((n) => n.setting === "[safety] limits_file")
      .map((n) => ({ path: n.path, what: n.setting })),
    { path: SITE_FILE, what: "the site file" },
    ...(site ? [{ path: site, what: "ACCEL_AGENT_SITE_FILE" }] : []),
  ];
  for (const w of named.filter((n) => isWritableSetting(n.setting))) {
    const dirs = withRealPath(w.path);
    for (const b of bounds) {
      const files = withRealPath(b.path);
      if (
        !dirs.some((d) => files.some((f) => f === d || f.startsWith(d === "/" ? "/" : `${d}/`)))
      ) {
        continue;
      }
      return `${w.setting} ${w.path} holds ${b.path} (${b.what}); a directory the program writes ` +
        "may not hold its configuration, limits or site files: choose another";
    }
  }
  return undefined;
}

/**
 * Why any user of the machine could replace the limits file, or undefined:
 * its directory (as named, or once links are resolved) is writable by all
 * without the sticky bit, so anyone may rename it away and put a wider one in
 * its place. Checked by the launcher, which may look at the directory; a
 * directory that cannot be looked at is left to the launcher's check.
 */
export function replaceableLimits(named: NamedPath[]): string | undefined {
  for (const n of named.filter((n) => n.setting === "[safety] limits_file")) {
    for (const path of withRealPath(n.path)) {
      const dir = path.slice(0, path.lastIndexOf("/")) || "/";
      let mode: number | null;
      try {
        mode = Deno.statSync(dir).mode;
      } catch {
        continue;
      }
      if (mode === null || (mode & 0o002) === 0 || (mode & 0o1000) !== 0) continue;
      return `${n.setting} ${n.path}: any user may replace it (its directory ${dir} is mode ` +
        `${(mode & 0o777).toString(8)} without the sticky bit), so it bounds nothing; make the ` +
        "directory writable by its owner only (chmod o-w)";
    }
  }
  return undefined;
}
