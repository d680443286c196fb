/**
 * Every file and directory a configuration names, resolved as the program
 * resolves them (`~` is the home directory, a relative path is relative to
 * the config file), each with the setting that names it: what the grants of
 * `src/app/permissions.ts` are computed from, and what a message names when
 * one of them cannot be used.
 *
 * Paths are found by key name, not by a list of today's keys: a key named
 * `dir`, `*_dir`, `*_dirs`, `*_file` or `*_md` in any table is a path, so a
 * new directory setting is granted without anyone remembering to.
 *
 * @module
 */
import type { Config } from "./schema.ts";

/** A path the configuration names, and the setting that names it (`[sandbox] data_dirs`). */
export interface NamedPath {
  path: string;
  setting: string;
}

/** The dotted key of a setting (`[sandbox] data_dirs` → `sandbox.data_dirs`), as origins name it. */
export function settingKey(setting: string): string {
  const m = /^\[([^\]]+)\] (.+)$/.exec(setting);
  return m ? `${m[1]}.${m[2]}` : setting;
}

/** Settings the program writes besides those {@link isWritableSetting} finds by name. */
const WRITABLE_SETTINGS: readonly string[] = [
  "[state] dir",
  // `execute_code`'s save_as writes a script here (the agent, never Python).
  "[sandbox] scripts_dir",
];

/**
 * Whether the program writes the directory a setting names: `[state] dir`,
 * `[sandbox] scripts_dir`, and any `cache_dir`, `work_dir` or `state_dir`
 * in any table (so a new cache is writable without a list to update).
 * Every other path is only read.
 */
export function isWritableSetting(setting: string): boolean {
  return WRITABLE_SETTINGS.includes(setting) || /\] (cache|work|state)_dir$/.test(setting);
}

/**
 * Whether the program makes the directory a setting names when it is not
 * there (`[state] dir`, any `cache_dir`, `work_dir` or `state_dir`); every
 * other path must exist when named.
 */
export function isCreatedSetting(setting: string): boolean {
  return setting === "[state] dir" || /\] (cache|work|state)_dir$/.test(setting);
}

const PATH_KEY = /^(dir|.+_dir|.+_dirs|.+_file|.+_md)$/;

/** `~` is `home`; a relative path is relative to `baseDir`; `.` and `..` segments are resolved. */
export function resolveConfigPath(path: string, baseDir: string, home: string): string {
  const abs = path === "~" || path.startsWith("~/")
    ? `${home}${path.slice(1)}`
    : path.startsWith("/")
    ? path
    : `${baseDir}/${path}`;
  return normalize(abs);
}

/** `/a/./b/../c/` → `/a/c`: Deno grants name paths, and a grant with `..` in it is easy to misread. */
export function normalize(path: string): string {
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return `/${out.join("/")}`;
}

/**
 * Why the configuration's paths cannot be resolved without `HOME`, or
 * undefined when they can: a path that starts with `~` needs it, and state
 * must never go to `/.local/state` (or the current directory) because it is unset.
 */
export function homeProblem(
  config: Config,
  home: string | undefined,
): string | undefined {
  if (home !== undefined && home.trim() !== "") return undefined;
  for (const { path, setting } of pathSettings(config)) {
    if (path === "~" || path.startsWith("~/")) {
      return `${setting} = "${path}" needs HOME, which is not set; set HOME, or give ${setting} ` +
        `an absolute path in the config file`;
    }
  }
  return undefined;
}

/**
 * Every non-empty path setting of `config`, resolved, in the order of the
 * file's tables. A setting that holds a list gives one entry per element.
 */
export function namedPaths(config: Config, baseDir: string, home: string): NamedPath[] {
  return pathSettings(config).map(({ path, setting }) => ({
    path: resolveConfigPath(path, baseDir, home),
    setting,
  }));
}

/** Every non-empty path setting of `config` as written, in the order of the file's tables. */
function pathSettings(config: Config): NamedPath[] {
  const out: NamedPath[] = [];
  const walk = (value: unknown, table: string[]) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return;
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === "object" && v !== null && !Array.isArray(v)) {
        walk(v, [...table, key]);
        continue;
      }
      if (!PATH_KEY.test(key)) continue;
      const setting = table.length ? `[${table.join(".")}] ${key}` : key;
      for (const p of Array.isArray(v) ? v : [v]) {
        if (typeof p === "string" && p.trim() !== "") out.push({ path: p, setting });
      }
    }
  };
  walk(config, []);
  return out;
}
