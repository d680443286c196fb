/**
 * Deno grants that follow the configuration, for every kind: the program
 * reads only the files and directories its configuration names (and its own
 * assets), writes only its state, cache, work and scripts directories, sees
 * only the environment variables it uses, contacts only the configured
 * hosts, and runs only its own runtime (the Python sandbox) and the launchers
 * of the configured displays. Anything else is
 * refused by Deno itself (`NotCapable`), whatever our code does.
 *
 * `accel-agent permissions` prints these flags; the launcher (`launch.ts`,
 * behind `deno task agent`) runs the program with them, and
 * `deno task compile` bakes the same flags into the executable.
 *
 * @module
 */
import type { LoadedConfig } from "../config/load.ts";
import {
  homeProblem,
  isWritableSetting,
  namedPaths,
  normalize,
  resolveConfigPath,
} from "../config/paths.ts";
import type { Config } from "../config/schema.ts";
import { launcherPrograms } from "../displays/catalogue.ts";
import { KILL_PROGRAM, resolveHook } from "../tools/hooks.ts";
import { EDITOR_ENV, editorCommand } from "./editor.ts";
import { siteCollectorsSync } from "../safety/site.ts";
import { collectorHost } from "../safety/forward_config.ts";
import { boundsOpenToAll, SITE_FILE, withRealPath, writesOverBounds } from "./grant_checks.ts";

/**
 * The only system information read: the host name, for the audit log, and
 * the user id, to refuse keys that belong to another user.
 */
const SYS = ["hostname", "uid"] as const;

/**
 * Variables read whatever the configuration: ours and the model SDK's
 * (`OPENAI_BASE_URL`, `OPENAI_ORG_ID`, … as prefixes), `HOME` for `~`, the
 * operator's login name for the audit log, and the terminal and colour
 * variables the prompts and tables look at.
 */
export const BASE_ENV = [
  "OPENAI_*",
  "ACCEL_AGENT_*",
  "HOME",
  "USER",
  "LOGNAME",
  "USERNAME",
  "NO_COLOR",
  "FORCE_COLOR",
  "TERM",
  "TERM_PROGRAM",
  "COLORTERM",
  "CI",
  "TMUX",
  "NODE_DISABLE_COLORS",
  "TERM_PROGRAM_VERSION",
  "CLI_WIDTH",
  "INQUIRER_KEYBINDINGS",
] as const;

/** The program's own files that are read at run time (under `deno run`; embedded when compiled). */
const OWN_FILES = [
  new URL("../../configs/agents/", import.meta.url),
  new URL("../../configs/skills/", import.meta.url),
  // The evaluation's built-in tasks (src/eval/task.ts).
  new URL("../../configs/evals/", import.meta.url),
  // The device index's built-in synonym table (src/index/synonyms.ts).
  new URL("../../configs/synonyms.toml", import.meta.url),
  // Everyday English, so the index corrects misspellings only (src/index/english.ts).
  new URL("../../configs/english_words.txt", import.meta.url),
].filter((u) => u.protocol === "file:").map((u) => normalize(decodeURIComponent(u.pathname)));

/** The default configuration file beside the program (read when no other is named). */
const DEFAULT_CONFIG = normalize(
  decodeURIComponent(new URL("../../configs/default.toml", import.meta.url).pathname),
);

/** One set of grants: each a list, never "everything". */
export interface Grants {
  read: string[];
  write: string[];
  env: string[];
  sys: string[];
  run: string[];
  net: string[];
  /**
   * Programs the configuration names by a bare name that is not on this
   * console's PATH: left out of `run` (Deno would say so on every start, and
   * could not start them anyway), each with the setting that names it.
   */
  notFound?: { program: string; setting: string }[];
}

/** What the grants are computed from besides the configuration. */
export interface GrantContext {
  /** The environment at start (for `HOME`, `ACCEL_AGENT_SITE_FILE`). */
  env: (name: string) => string | undefined;
  /** Where relative paths are when there is no config file, and `~` when HOME is unset. */
  cwd: string;
  /** The executables the sandbox may be started from (default: this runtime). */
  run?: string[];
  /** The Pyodide assets when `[sandbox] pyodide_dir` is empty (default: the pinned npm package's). */
  pyodideDir?: string;
  /** More files to read: those named on the command line (`plan show FILE`). */
  extraRead?: string[];
  /** More files to write: those a command line names for output (`eval --out FILE`). */
  extraWrite?: string[];
  /**
   * Grant the editor `$VISUAL`/`$EDITOR` name when `[elog] editor` names none (the launcher,
   * which runs with the operator's environment; never a compiled executable's baked grants).
   */
  editorFromEnvironment?: boolean;
}

/** A grant that cannot be written as a Deno flag: a path with a comma, naming its setting. */
export class GrantError extends Error {
  override name = "GrantError";
}

/** `host:port` of a URL, with the scheme's default port; undefined when unparsable. */
export function hostPort(url: string): string | undefined {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === "https:" || u.protocol === "wss:" ? "443" : "80");
    return `${u.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/** Every URL the configuration may make the program contact, model first. */
export function configuredUrls(config: Config): string[] {
  const urls = [config.llm.base_url];
  for (const entry of Object.values(config.llm.models)) {
    if (typeof entry !== "string" && entry.base_url) urls.push(entry.base_url);
  }
  if (config.facility.adapter === "epics") {
    const e = config.epics;
    urls.push(e.pvws_url, e.archiver_url, e.channelfinder_url, e.olog_url, e.alarm_logger_url);
  } else if (config.facility.adapter === "tango") {
    urls.push(config.tango.rest_url);
  }
  return urls.filter((u) => u !== "");
}

/**
 * The hosts of {@link configuredUrls}, unique, in order. A host with a comma
 * is refused ({@link GrantError}): Deno would read the grant as two hosts.
 */
export function netHosts(config: Config): string[] {
  const hosts = configuredUrls(config).map((url) => {
    const host = hostPort(url);
    if (host?.includes(",")) {
      throw new GrantError(
        `${url} names the host ${host.replace(/:\d+$/, "")}, which has a comma: no Deno grant ` +
          "can hold it; correct the URL",
      );
    }
    return host;
  });
  return [...new Set(hosts.filter((h) => h !== undefined))];
}

/** The variables the configuration names: API keys and the facility's credentials. */
export function configuredEnv(config: Config): string[] {
  const names = [config.llm.api_key_env];
  for (const entry of Object.values(config.llm.models)) {
    if (typeof entry !== "string" && entry.api_key_env) names.push(entry.api_key_env);
  }
  if (config.facility.adapter === "epics") {
    names.push(config.epics.username_env, config.epics.password_env);
  } else if (config.facility.adapter === "tango") {
    names.push(config.tango.username_env, config.tango.password_env);
  }
  return names.filter((n) => n !== "");
}

/** The pinned Pyodide's assets (as `src/sandbox/mod.ts` finds them). */
function pinnedPyodideDir(): string {
  return normalize(decodeURIComponent(new URL(".", import.meta.resolve("pyodide")).pathname));
}

/**
 * The grants of a loaded configuration: read the config file and every path
 * it names, the program's own assets, the Pyodide assets and the site files;
 * write the state, work, cache and scripts directories; the variables of
 * {@link BASE_ENV} and those the config names; the configured hosts; run
 * only this runtime and the configured hook programs. Relative paths resolve as the program resolves them.
 */
export function computeGrants(loaded: LoadedConfig, ctx: GrantContext): Grants {
  const { config } = loaded;
  const unset = homeProblem(config, ctx.env("HOME"));
  if (unset) throw new GrantError(unset);
  const home = ctx.env("HOME") ?? ctx.cwd;
  const named = namedPaths(config, loaded.baseDir, home);
  const check = (path: string, setting: string) => {
    if (path.includes(",")) {
      throw new GrantError(
        `${setting}: ${path} has a comma, which no Deno grant can hold; rename the directory`,
      );
    }
    return path;
  };
  const editor = grantedEditor(config, ctx);
  const programs = onPath([
    ...launcherPrograms(config, loaded.baseDir, home).map((p) => ({
      program: check(p, "[launchers]"),
      setting: "[launchers]",
    })),
    ...hookPrograms(config, loaded.baseDir, home).map((p) => ({ program: p, setting: "[hooks]" })),
    // The editor of a logbook draft's text (only its program).
    ...(editor
      ? [{ program: check(editor.program, "[elog] editor"), setting: "[elog] editor" }]
      : []),
  ], ctx.env("PATH"));
  const site = ctx.env("ACCEL_AGENT_SITE_FILE")?.trim();
  const pyodide = config.sandbox.pyodide_dir
    ? resolveConfigPath(config.sandbox.pyodide_dir, loaded.baseDir, home)
    : (ctx.pyodideDir ?? pinnedPyodideDir());
  // The sandbox reads the scans below the state directory; granted on their own, the compiled
  // sandbox role can keep them while it gives up the rest of the state directory.
  const scans = named.filter((p) => p.setting === "[state] dir")
    .map((p) => ({ path: `${p.path}/scans`, setting: p.setting }));
  const read = [
    // The config file and each one it inherits from (a site config, the shipped defaults).
    ...(loaded.path ? [{ path: loaded.path, setting: "--config" }] : []),
    ...(loaded.layers ?? []).map((l) => ({ path: l.path, setting: "extends" })),
    ...named,
    ...scans,
    ...OWN_FILES.map((path) => ({ path, setting: "the program's own files" })),
    { path: pyodide, setting: "[sandbox] pyodide_dir" },
    { path: SITE_FILE, setting: "the site file" },
    ...(site
      ? [{ path: resolveConfigPath(site, ctx.cwd, home), setting: "ACCEL_AGENT_SITE_FILE" }]
      : []),
    ...(ctx.extraRead ?? []).map((p) => ({
      path: resolveConfigPath(p, ctx.cwd, home),
      setting: "a file named on the command line",
    })),
  ].flatMap(({ path, setting }) => withRealPath(check(path, setting)));
  const write = [
    ...named.filter((p) => isWritableSetting(p.setting)),
    ...(ctx.extraWrite ?? []).map((p) => ({
      path: resolveConfigPath(p, ctx.cwd, home),
      setting: "an output file named on the command line",
    })),
  ].flatMap(({ path, setting }) => withRealPath(check(path, setting)));
  const over =
    writesOverBounds(loaded, named, site ? resolveConfigPath(site, ctx.cwd, home) : "") ??
      boundsOpenToAll(loaded, named);
  if (over) throw new GrantError(over);
  return {
    read: unique(read),
    write: unique(write),
    env: unique([
      ...BASE_ENV,
      ...configuredEnv(config).filter((n) => !coveredByBase(n)),
      ...(editor?.fromEnv ? EDITOR_ENV : []),
    ]),
    sys: [...SYS],
    // This runtime (the sandbox), the launchers of the kinds of display the catalogue holds,
    // the facility's hook programs ([[hooks.*]] command) and the logbook draft's editor,
    // those named bare only when found.
    run: unique([...(ctx.run ?? [Deno.execPath()]), ...programs.found]),
    // The hosts of the model endpoints and facility services, and the site's log collectors.
    net: unique([
      ...netHosts(config),
      ...siteCollectorsSync(ctx.env).flatMap((c) => collectorHost(c.target) ?? []),
    ]),
    ...(programs.missing.length ? { notFound: programs.missing } : {}),
  };
}

/** The editor's program to grant: `[elog] editor`'s, else (when asked) the environment's. */
function grantedEditor(
  config: Config,
  ctx: GrantContext,
): { program: string; fromEnv: boolean } | undefined {
  const named = config.elog.editor[0];
  if (named) return { program: named, fromEnv: false };
  if (!ctx.editorFromEnvironment) return undefined;
  const [program] = editorCommand(config, ctx.env);
  return program && EDITOR_ENV.some((n) => ctx.env(n)?.trim())
    ? { program, fromEnv: true }
    : undefined;
}

/**
 * Programs split into those to grant (a path, or a bare name found on
 * `path`) and bare names found nowhere on it. The program itself, under the
 * launcher's grants, may neither read PATH nor its directories: it takes the
 * launcher's finding from the run grant it was given.
 */
export function onPath(
  programs: { program: string; setting: string }[],
  path: string | undefined,
): { found: string[]; missing: { program: string; setting: string }[] } {
  const found: string[] = [];
  const missing: { program: string; setting: string }[] = [];
  for (const p of programs) {
    if (p.program.includes("/") || onPathHere(p.program, path)) found.push(p.program);
    else if (!missing.some((m) => m.program === p.program)) missing.push(p);
  }
  return { found, missing };
}

function onPathHere(program: string, path: string | undefined): boolean {
  const granted = () =>
    Deno.permissions.querySync({ name: "run", command: program }).state === "granted";
  if (path === undefined) return granted();
  try {
    return path.split(":").filter((d) => d.startsWith("/")).some((d) => {
      try {
        const info = Deno.statSync(`${d}/${program}`);
        return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable) throw e;
        return false;
      }
    });
  } catch {
    return granted();
  }
}

/**
 * The facility's hook programs ([[hooks.*]] command), and the program that
 * stops a hook's process group past its timeout (the runtime may signal
 * only its own children under scoped run grants).
 */
function hookPrograms(config: LoadedConfig["config"], baseDir: string, home: string): string[] {
  const hooks = [...config.hooks.before_tool, ...config.hooks.after_tool];
  if (hooks.length === 0) return [];
  return [
    ...hooks.flatMap((h) => resolveHook(h, baseDir, home).command.slice(0, 1)),
    KILL_PROGRAM,
  ];
}

/**
 * The grants of a program whose configuration cannot be loaded: enough to
 * read the file, the files it inherits from (`chain`: those the launcher
 * got to; the shipped defaults always) and say what is wrong, nothing else.
 */
export function fallbackGrants(
  configPath: string | undefined,
  cwd: string,
  chain: string[] = [],
): Grants {
  const file = configPath ? [resolveConfigPath(configPath, cwd, cwd)] : [];
  return {
    read: unique([...file, DEFAULT_CONFIG, ...chain, ...OWN_FILES]).filter((p) => !p.includes(",")),
    write: [],
    env: [...BASE_ENV],
    sys: [],
    run: [],
    net: [],
  };
}

/** Whether a base prefix (`OPENAI_*`) already grants the variable. */
function coveredByBase(name: string): boolean {
  return BASE_ENV.some((b) => b.endsWith("*") ? name.startsWith(b.slice(0, -1)) : name === b);
}

/** Whether a `deno` flag is one of those {@link grantFlags} makes (to pick them out of a command line). */
export function isGrantFlag(flag: string): boolean {
  return /^--(allow|deny|ignore)-/.test(flag) || flag === "--no-prompt";
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/**
 * The exact `deno run` (and `deno compile`) flags for a set of grants: one
 * list per kind, never a bare `--allow-read`; an empty list is no flag.
 * `--no-prompt`: in a terminal, Deno would otherwise ask the operator to
 * widen a grant, where it must refuse. `--ignore-env`: a variable off the
 * list reads as unset instead of failing, so a dependency that looks at one
 * more terminal variable (Node's colour detection reads a dozen) cannot crash
 * the program, and still sees no value.
 */
export function grantFlags(g: Grants): string[] {
  const flag = (name: string, list: string[]) =>
    list.length ? [`--allow-${name}=${list.join(",")}`] : [];
  return [
    "--no-prompt",
    ...flag("read", g.read),
    ...flag("write", g.write),
    ...flag("env", g.env),
    "--ignore-env",
    ...flag("sys", g.sys),
    ...flag("run", g.run),
    ...flag("net", g.net),
  ];
}
