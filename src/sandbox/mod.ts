/**
 * The Python sandbox: Pyodide in its own OS process, with the interpreter in
 * a worker of narrower permissions still. See `runner.ts` for the runner and
 * `process_main.ts` for the process.
 *
 * @module
 */
import type { SandboxConfig } from "../config/sandbox_schema.ts";
import { LocalPackages, MAX_LOCK_BYTES } from "./packages.ts";
import { readRegularTextSync } from "../util/bounded_read.ts";
import { PyodideSandbox } from "./runner.ts";
import type { AgentGrants } from "./role_grants.ts";
import type { SandboxDeps } from "./types.ts";

export { PyodideSandbox } from "./runner.ts";
export type {
  OutputFile,
  RunRequest,
  RunResult,
  SandboxDeps,
  SandboxLimits,
  SandboxRunner,
} from "./types.ts";
export { isCompiled, SANDBOX_ROLE_ARG } from "./sandbox_process.ts";

/** The pinned Pyodide's assets, in Deno's module cache. */
export function defaultPyodideDir(): string {
  return decodeURIComponent(new URL(".", import.meta.resolve("pyodide")).pathname).replace(
    /\/$/,
    "",
  );
}

/** Absolute paths: `~` is `home`, relative paths are relative to `baseDir`. */
export function resolvePath(path: string, baseDir: string, home: string): string {
  if (path === "~" || path.startsWith("~/")) return `${home}${path.slice(1)}`;
  return path.startsWith("/") ? path : `${baseDir}/${path}`.replace(/\/\.\//g, "/");
}

/**
 * The sandbox the configuration describes, for the tools. Touches nothing on
 * disk and starts nothing: the work and cache directories are made when the
 * first interpreter starts (see {@link PyodideSandbox.prewarm}), so commands
 * that never run Python never need them.
 * A data directory that does not exist is a RangeError naming it.
 */
export function createSandboxDeps(
  cfg: SandboxConfig,
  baseDir: string,
  home: string,
  agentGrants?: AgentGrants,
): SandboxDeps {
  const at = (p: string) => resolvePath(p, baseDir, home);
  const dataDirs = cfg.data_dirs.map((d) => {
    try {
      return Deno.realPathSync(at(d));
    } catch {
      throw new RangeError(`[sandbox] data_dirs: ${d} is not a readable directory`);
    }
  });
  const scriptsDir = cfg.scripts_dir ? existing(at(cfg.scripts_dir)) : undefined;
  const packagesDir = cfg.packages_dir ? existing(at(cfg.packages_dir)) : undefined;
  const runner = new PyodideSandbox({
    pyodideDir: cfg.pyodide_dir ? at(cfg.pyodide_dir) : defaultPyodideDir(),
    dataDirs,
    ...(scriptsDir ? { scriptsDir } : {}),
    ...(packagesDir ? { packagesDir } : {}),
    workRoot: at(cfg.work_dir),
    ...(cfg.snapshot ? { snapshotPath: `${at(cfg.cache_dir)}/${SNAPSHOT_NAME}` } : {}),
    optimize: cfg.optimize,
    spareProcesses: cfg.spare_processes,
    ...(agentGrants ? { agentGrants } : {}),
    limits: {
      timeoutMs: cfg.timeout_s * 1000,
      graceMs: cfg.grace_ms,
      memoryMb: cfg.memory_mb,
      maxOutputChars: cfg.max_output_chars,
      maxFiles: cfg.max_files,
      maxFileBytes: cfg.max_file_bytes,
      maxWorkMb: cfg.max_work_mb,
      keepRuns: cfg.keep_runs,
    },
  });
  return {
    runner,
    ...(scriptsDir ? { scriptsDir } : {}),
    packages: packagesDir
      ? LocalPackages.scan(
        packagesDir,
        (path) => readRegularTextSync(path, MAX_LOCK_BYTES, { fix: "fix [sandbox] packages_dir" }),
      ).names()
      : [],
  };
}

/** Named after the Pyodide version: a snapshot only fits the build that made it. */
const SNAPSHOT_NAME = "pyodide-314.0.7.snapshot";

function existing(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}
