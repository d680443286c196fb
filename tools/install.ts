/**
 * `deno task install [--prefix DIR] [--config FILE]`: puts an `accel-agent`
 * command in `DIR/bin` (default `~/.local`). Where `deno compile` has a
 * runtime (`DENORT_BIN`, or one already in Deno's cache) it is the compiled
 * executable, built as `deno task compile` builds it, with the grants of
 * `--config` baked in; otherwise it is a launcher script that runs this
 * checkout's `launch.ts` directly with Deno — the grants `deno task agent`
 * gives (the launcher computes the program's own from the configuration at
 * each start), without `deno task`'s "Task …" line or Deno's update check.
 *
 * First it fills Deno's module cache with everything the program loads
 * (`deno cache`), so a console that has the cache needs no network after.
 * Writes nothing when it cannot finish: the command appears whole or not at all.
 *
 * @module
 */
import { runtimeProblem } from "./compile.ts";

/** This checkout, as a path (a directory with a space or an accented letter decoded). */
const ROOT = decodeURIComponent(new URL("..", import.meta.url).pathname).replace(/\/$/, "");

/** The modules the program loads, for `deno cache` (the sandbox's are started as their own programs). */
export const ENTRY_POINTS = [
  "main.ts",
  "launch.ts",
  "src/sandbox/process_main.ts",
  "src/sandbox/worker.ts",
];

interface Options {
  prefix: string;
  config?: string;
}

function fail(message: string): never {
  console.error(`install: ${message}`);
  Deno.exit(2);
}

function parseArgs(args: string[]): Options {
  const home = Deno.env.get("HOME");
  const opts: Partial<Options> = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = (args[i] as string).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inline ?? args[++i] ?? fail(`${flag} needs a value`);
    if (flag === "--prefix") opts.prefix = value();
    else if (flag === "--config" || flag === "-c") opts.config = value();
    else fail(`unknown argument ${args[i]}: use --prefix DIR, --config FILE`);
  }
  if (!opts.prefix && !home) fail("HOME is not set: give --prefix DIR");
  return { prefix: absolute(opts.prefix ?? `${home}/.local`), config: opts.config };
}

/** A path the operator typed: `deno task` runs in the project, INIT_CWD is where they were. */
function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.env.get("INIT_CWD") ?? Deno.cwd()}/${path}`;
}

/** The grant flags of `deno task agent` in deno.json: what the launcher itself runs with. */
export function agentTaskFlags(denoJson: string): string[] {
  const task = (JSON.parse(denoJson) as { tasks?: Record<string, string> }).tasks?.agent ?? "";
  const m = /^deno run ((?:--[\w-]+(?:=\S+)? )+)launch\.ts$/.exec(task.trim());
  if (!m) throw new Error(`deno.json's agent task is not "deno run FLAGS launch.ts": ${task}`);
  return (m[1] as string).trim().split(" ");
}

/** Single-quoted for sh. */
function sh(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The launcher script: `deno run` of this checkout's `launch.ts` with the
 * agent task's flags. `DENO_DIR`, when set at install, stays the cache it
 * reads (a console may have no other).
 */
export function launcherScript(
  deno: string,
  root: string,
  flags: string[],
  denoDir?: string,
): string {
  return [
    "#!/bin/sh",
    `# accel-agent, installed by deno task install from ${root}.`,
    "# launch.ts computes the program's grants from the configuration at each start",
    "# (as deno task agent does); DENO_NO_UPDATE_CHECK keeps Deno's own notices off stderr.",
    "DENO_NO_UPDATE_CHECK=1",
    "export DENO_NO_UPDATE_CHECK",
    ...(denoDir
      ? [`DENO_DIR="\${DENO_DIR:-${denoDir.replaceAll(/["$`\\]/g, "\\$&")}}"`, "export DENO_DIR"]
      : []),
    `exec ${sh(deno)} run ${["--quiet", ...flags.filter((f) => f !== "--quiet")].join(" ")} ${
      sh(`${root}/launch.ts`)
    } "$@"`,
    "",
  ].join("\n");
}

/** Writes `text` to `path` (mode `mode`) by renaming a complete file into place. */
async function writeWhole(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${Deno.pid}.tmp`;
  try {
    await Deno.writeTextFile(tmp, text, { mode });
    await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
}

/**
 * Why the command cannot go where the prefix puts it, before anything is
 * done: the prefix or its `bin` is not a directory, or a directory already
 * stands at `bin/accel-agent` (a file there is replaced).
 */
function placeProblem(prefix: string, bin: string, target: string): string | undefined {
  const kind = (path: string) => {
    try {
      return Deno.statSync(path);
    } catch {
      return undefined; // absent (made below) or unreachable (said when it is made)
    }
  };
  for (const dir of [prefix, bin]) {
    const info = kind(dir);
    if (info && !info.isDirectory) {
      return `${dir} exists and is not a directory; choose another --prefix`;
    }
  }
  if (kind(target)?.isDirectory) {
    return `${target} is a directory; remove it or choose another --prefix`;
  }
  return undefined;
}

async function run(args: string[]): Promise<boolean> {
  const status = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  return status.success;
}

if (import.meta.main) {
  const opts = parseArgs(Deno.args);
  const bin = `${opts.prefix}/bin`;
  const target = `${bin}/accel-agent`;
  if (target.includes(",")) {
    fail(`${target}: a path with a comma cannot be granted; choose another prefix`);
  }
  const taken = placeProblem(opts.prefix, bin, target);
  if (taken) fail(taken);
  if (!(await run(["cache", "--quiet", ...ENTRY_POINTS.map((e) => `${ROOT}/${e}`)]))) {
    fail(
      "deno cache could not fill the module cache (see above); offline, copy a filled DENO_DIR first",
    );
  }
  await Deno.mkdir(bin, { recursive: true }).catch((e) =>
    fail(`cannot make ${bin} (${firstLine(e)}); choose another --prefix`)
  );
  let what: string;
  if ((await runtimeProblem()) === undefined) {
    const compiled = await run([
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      "--allow-net=dl.deno.land",
      `${ROOT}/tools/compile.ts`,
      "--output",
      target,
      "--install-path",
      target,
      ...(opts.config ? ["--config", absolute(opts.config)] : []),
    ]);
    if (!compiled) fail("deno compile failed (see above); nothing was installed");
    what = "the compiled executable";
  } else {
    const flags = agentTaskFlags(await Deno.readTextFile(`${ROOT}/deno.json`));
    await writeWhole(
      target,
      launcherScript(Deno.execPath(), ROOT, flags, Deno.env.get("DENO_DIR")),
      0o755,
    ).catch((e) => fail(`cannot write ${target} (${firstLine(e)}); choose another --prefix`));
    what = "a launcher of this checkout (no denort for a compiled executable: set DENORT_BIN)";
  }
  console.log(`${target}: ${what}`);
  const path = (Deno.env.get("PATH") ?? "").split(":");
  if (!path.includes(bin)) console.log(`add ${bin} to PATH to run it as accel-agent`);
}
