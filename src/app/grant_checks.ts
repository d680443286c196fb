/**
 * Checks on the grants before they are given: a directory the program
 * writes may not hold the files that bound it, no other user may change
 * them, and paths are granted in their resolved form too.
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
 * How any user of the machine could change the file at `path` (as named, or
 * once links are resolved), or undefined: write it (`file`), or, its directory
 * being writable by all without the sticky bit, rename it away and put another
 * in its place. What cannot be looked at is left alone: the launcher, which
 * may read everything, has checked it.
 */
function openToAll(path: string, file: boolean): string | undefined {
  const modeOf = (p: string) => {
    try {
      return Deno.statSync(p).mode ?? 0;
    } catch {
      return 0;
    }
  };
  for (const real of withRealPath(path)) {
    const mode = file ? modeOf(real) : 0;
    if (mode & 0o002) return `any user may write it (mode ${(mode & 0o777).toString(8)})`;
    const dir = real.slice(0, real.lastIndexOf("/")) || "/";
    const dirMode = modeOf(dir);
    if ((dirMode & 0o002) && !(dirMode & 0o1000)) {
      return `any user may replace it (its directory ${dir} is mode ` +
        `${(dirMode & 0o777).toString(8)} without the sticky bit)`;
    }
  }
  return undefined;
}

/**
 * Why a file that bounds the program could be changed by any user of the
 * machine, or undefined: a config file of the chain (it names hooks, data
 * directories, the limits file) or the limits file's directory (the file's
 * own mode is checked where it is read, `src/safety/limits.ts`).
 */
export function boundsOpenToAll(loaded: LoadedConfig, named: NamedPath[]): string | undefined {
  const configs = [
    ...(loaded.path ? [{ path: loaded.path, what: "the config file" }] : []),
    ...(loaded.layers ?? []).map((l) => ({ path: l.path, what: "a config file it extends" })),
  ];
  for (const c of configs) {
    const how = openToAll(c.path, true);
    if (!how) continue;
    return `${c.path} (${c.what}): ${how}, so any of them could change what the program may ` +
      `do; make ${how.includes("directory") ? "the directory" : "it"} writable by its owner ` +
      "only (chmod o-w)";
  }
  for (const n of named.filter((n) => n.setting === "[safety] limits_file")) {
    const how = openToAll(n.path, false);
    if (!how) continue;
    return `${n.setting} ${n.path}: ${how}, so it bounds nothing; make the directory writable ` +
      "by its owner only (chmod o-w)";
  }
  return undefined;
}
