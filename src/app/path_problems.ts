/**
 * Errors a person can act on: when a directory or file the configuration
 * names cannot be used (not readable, on a read-only disk, outside the
 * program's grants), the message is one line naming the path and the
 * setting that names it, and what to do, instead of an OS error or a Deno
 * stack trace.
 *
 * @module
 */
import { loadConfig, type LoadedConfig } from "../config/mod.ts";
import type { Io } from "./io.ts";
import {
  isCreatedSetting,
  isWritableSetting,
  type NamedPath,
  namedPaths,
  settingKey,
} from "../config/paths.ts";
import { errorMessage } from "../util/errors.ts";

/** The path an OS or permission error is about, from Deno's message, if it names one. */
export function errorPath(message: string): string | undefined {
  return /Requires (?:read|write) access to "([^"]+)"/.exec(message)?.[1] ??
    /\(os error \d+\): \w+ '([^']+)'/.exec(message)?.[1];
}

/** Why the path cannot be used, in words, or undefined for an error of another kind. */
function reason(e: unknown): string | undefined {
  const message = errorMessage(e);
  if (e instanceof Deno.errors.NotCapable || /^Requires (read|write) access/.test(message)) {
    return "is outside the grants the program was started with (start it through deno task " +
      "agent, or rebuild the executable with this config)";
  }
  if (/os error 30\b/.test(message)) return "is on a read-only file system";
  if (e instanceof Deno.errors.PermissionDenied || /os error 13\b/.test(message)) {
    return "cannot be used by this user (permission denied)";
  }
  return undefined;
}

/** The named path that holds `path` most closely. */
function owner(path: string, named: NamedPath[]): NamedPath | undefined {
  return named.filter((n) => path === n.path || path.startsWith(`${n.path}/`))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

/**
 * One line for an error about a path the configuration names: the setting,
 * the path, what is wrong and what to do. Undefined when the error is of
 * another kind or about a path the configuration does not name.
 */
export function describePathProblem(
  e: unknown,
  loaded: LoadedConfig,
  home: string,
): string | undefined {
  const why = reason(e);
  const path = errorPath(errorMessage(e));
  if (!why || !path) return undefined;
  const named = namedPaths(loaded.config, loaded.baseDir, home);
  if (loaded.path) named.push({ path: loaded.path, setting: "--config" });
  const n = owner(path, named);
  if (!n) return undefined;
  const writable = isWritableSetting(n.setting);
  const fix = writable
    ? `choose a writable directory for ${n.setting}`
    : `make it readable or change ${n.setting}`;
  return `${n.setting} ${n.path}: ${path === n.path ? "" : `${path} `}${why}; ${fix}`;
}

/**
 * Checks that each path the configuration names exists (unless the program
 * makes it: the state, work and cache directories) and can be read (a
 * directory listed, a file opened), so a wrong setting is one line at
 * start, naming the setting, the path and the file that set it — not a
 * default silently lost, or a failure half-way through a run. Returns the
 * problem, if any.
 */
export function unreadableConfiguredPath(loaded: LoadedConfig, home: string): string | undefined {
  for (const n of namedPaths(loaded.config, loaded.baseDir, home)) {
    try {
      const info = Deno.statSync(n.path);
      if (info.isDirectory) Deno.readDirSync(n.path)[Symbol.iterator]().next();
      // Only a regular file is opened: a FIFO would wait for a writer.
      else if (info.isFile) Deno.openSync(n.path, { read: true }).close();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        if (isCreatedSetting(n.setting)) continue;
        const from = loaded.origins?.get(settingKey(n.setting));
        return `${n.setting} ${n.path} does not exist${
          from ? ` (set in ${from})` : ""
        }; create it or change ${n.setting}`;
      }
      const line = describePathProblem(e, loaded, home);
      if (line) return line;
      if (!reason(e)) continue;
      return `${n.setting} ${n.path}: ${reason(e)}; make it readable or change ${n.setting}`;
    }
  }
  return undefined;
}

/** {@link describePathProblem} for an error that ended a command, loading the config again. */
export async function pathProblem(
  e: unknown,
  config: string | undefined,
  io: Io,
): Promise<string | undefined> {
  if (!reason(e)) return undefined;
  try {
    const loaded = await loadConfig({ path: config, env: { get: io.env }, cwd: io.cwd });
    return describePathProblem(e, loaded, io.env("HOME") ?? io.cwd);
  } catch {
    return undefined;
  }
}
