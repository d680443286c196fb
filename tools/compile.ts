/**
 * `deno task compile [--config FILE] [--output PATH] [--install-path PATH]`:
 * the single executable. `deno compile` cannot be given flags at run time,
 * so what `launch.ts` and the sandbox decide at start is baked in here from
 * the configuration: the grants (net only to the configured hosts; run only
 * to the executable itself, at `--install-path`, by default where it is
 * written), the worker permissions option, the interpreter's worker module,
 * and the sandbox's V8 flags (`[sandbox] memory_mb` and `optimize`).
 *
 * `deno compile` needs Deno's `denort` runtime, which it downloads from
 * dl.deno.land; where that host is unreachable, `DENORT_BIN` must name a
 * local copy. This says so in one line instead of failing in the download.
 *
 * @module
 */
import { computeGrants, GrantError, grantFlags, type Grants } from "../src/app/permissions.ts";
import { loadConfig } from "../src/config/mod.ts";
import { v8Flags } from "../src/sandbox/sandbox_process.ts";

/** This checkout, as a path (a directory with a space or an accented letter decoded). */
const ROOT = decodeURIComponent(new URL("..", import.meta.url).pathname).replace(/\/$/, "");
const DOWNLOAD_HOST = "https://dl.deno.land";

interface Options {
  config?: string;
  output: string;
  installPath?: string;
}

function fail(message: string): never {
  console.error(`compile: ${message}`);
  Deno.exit(2);
}

function parseArgs(args: string[]): Options {
  const opts: Options = { output: `${ROOT}/dist/accel-agent` };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = (args[i] as string).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inline ?? args[++i] ?? fail(`${flag} needs a value`);
    if (flag === "--config" || flag === "-c") opts.config = value();
    else if (flag === "--output" || flag === "-o") opts.output = value();
    else if (flag === "--install-path") opts.installPath = value();
    else fail(`unknown argument ${args[i]}: use --config FILE, --output PATH, --install-path PATH`);
  }
  return opts;
}

/** A path the operator typed: `deno task` runs in the project, INIT_CWD is where they were. */
function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.env.get("INIT_CWD") ?? Deno.cwd()}/${path}`;
}

/** `path` and, when it differs, its resolved form (Deno checks run grants on resolved paths). */
export function runGrantPaths(path: string): string[] {
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  try {
    const real = `${Deno.realPathSync(dir)}/${path.slice(path.lastIndexOf("/") + 1)}`;
    return real === path ? [path] : [path, real];
  } catch {
    return [path];
  }
}

/** Why no runtime can be had, or undefined when `deno compile` will find one. */
export async function runtimeProblem(): Promise<string | undefined> {
  const local = Deno.env.get("DENORT_BIN");
  if (local) {
    try {
      if (Deno.statSync(local).isFile) return undefined;
    } catch {
      // reported below
    }
    return `DENORT_BIN=${local} is not a file: point it at a local denort ${Deno.version.deno}`;
  }
  // deno compile keeps what it downloaded below DENO_DIR/dl: a cached runtime needs no
  // network (the layout is Deno 2's as we read it; not verifiable here, where none was ever
  // downloaded: a wrong guess only means the probe below runs).
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
  const cached = `${denoDir}/dl/release/v${Deno.version.deno}/denort-${Deno.build.target}.zip`;
  try {
    if (Deno.statSync(cached).isFile) return undefined;
  } catch {
    // not cached
  }
  try {
    // Any answer (a redirect included) means the host is reachable.
    await fetch(DOWNLOAD_HOST, {
      method: "HEAD",
      redirect: "manual",
      signal: AbortSignal.timeout(3000),
    });
    return undefined;
  } catch {
    return `deno compile downloads its denort runtime from ${DOWNLOAD_HOST}, which is unreachable: ` +
      `set DENORT_BIN to a local denort ${Deno.version.deno} for ${Deno.build.target}`;
  }
}

/**
 * The `deno compile` arguments for a configuration: its grants exactly as
 * `accel-agent permissions` prints them (see `src/app/permissions.ts`), with
 * the executable itself as the one program it may run.
 */
export function compileArgs(
  grants: Grants,
  sandbox: { memory_mb: number; optimize: "eager" | "hot" },
  output: string,
): string[] {
  return [
    "compile",
    "--quiet",
    ...grantFlags(grants),
    "--unstable-worker-options",
    // Started with `new Worker(new URL(...))`: not found by the module graph.
    `--include=${ROOT}/src/sandbox/worker.ts`,
    `--include=${ROOT}/src/sandbox/memory_watch.ts`,
    // Read at run time beside the module that names it (the device index's vocabulary).
    `--include=${ROOT}/configs/synonyms.toml`,
    `--include=${ROOT}/configs/english_words.txt`,
    `--v8-flags=${v8Flags({ optimize: sandbox.optimize }, sandbox.memory_mb).join(",")}`,
    `--config=${ROOT}/deno.json`,
    `--output=${output}`,
    `${ROOT}/main.ts`,
  ];
}

if (import.meta.main) {
  const opts = parseArgs(Deno.args);
  let loaded;
  try {
    loaded = await loadConfig({
      path: opts.config && absolute(opts.config),
      env: { get: (n) => Deno.env.get(n) },
      cwd: Deno.env.get("INIT_CWD") ?? Deno.cwd(),
    });
  } catch (e) {
    fail((e as Error).message);
  }
  const problem = await runtimeProblem();
  if (problem) fail(problem);
  const output = absolute(opts.output);
  const installPath = absolute(opts.installPath ?? output);
  // Deno's permission lists are comma-separated, with no escape.
  for (const path of [output, installPath]) {
    if (path.includes(",")) fail(`${path}: a path with a comma cannot be granted; choose another`);
  }
  await Deno.mkdir(output.slice(0, output.lastIndexOf("/")) || "/", { recursive: true });
  let grants;
  try {
    grants = computeGrants(loaded, {
      env: (n) => Deno.env.get(n),
      cwd: Deno.env.get("INIT_CWD") ?? Deno.cwd(),
      run: runGrantPaths(installPath),
    });
  } catch (e) {
    if (e instanceof GrantError) fail(e.message);
    throw e;
  }
  const args = compileArgs(grants, loaded.config.sandbox, output);
  const status = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "inherit",
    stderr: "inherit",
  })
    .spawn().status;
  if (!status.success) fail(`deno compile failed (exit ${status.code}); see above`);
  console.log(output);
}
