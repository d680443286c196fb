/**
 * Runs the real `main.ts` in a child process, as an operator's shell would.
 *
 * @module
 */

import { fileTempDir, removeTree } from "./temp.ts";

export const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
export const MAIN = `${ROOT}/main.ts`;

/** The grants of `deno task agent`. */
export const AGENT_FLAGS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net",
  // The Python sandbox is a child process (the agent's own runtime, narrower flags).
  "--allow-run",
  "--allow-sys=hostname,osRelease,homedir,uid",
];

export interface RunOptions {
  /** Environment on top of a clean one (PATH and a temporary HOME). */
  env?: Record<string, string>;
  stdin?: string;
  /** Called with the child once it runs (to send signals). */
  onSpawn?: (child: Deno.ChildProcess) => void | Promise<void>;
  /**
   * Kills the child (SIGKILL) if it is still running this long after it
   * started: a test of a program that should stop by itself ends even when
   * it does not, and fails on the exit code (137), with a line on stderr
   * saying so. Make it generous (60 s): it is a ceiling, not a measure.
   */
  ceilingMs?: number;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * A temporary HOME so history and state never touch the developer's; one per
 * test file, removed (with what the agents wrote there) when its tests have run.
 */
export const TEST_HOME = fileTempDir("accel-agent-home-");

/** Variables of ours that must not leak from the developer's shell into a test. */
const OURS = [
  "OPENAI_BASE_URL",
  "OPENAI_API_KEY",
  "ACCEL_AGENT_CONFIG",
  "ACCEL_AGENT_MODEL",
  "ACCEL_AGENT_SITE_FILE",
  "NO_COLOR",
  // The launcher grants the editor these name: a developer's must not widen a test's grants.
  "EDITOR",
  "VISUAL",
];

/** The parent's environment without our variables, with a temporary HOME and the parent's Deno cache. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (const k of OURS) delete env[k];
  const home = Deno.env.get("HOME") ?? "/root";
  env.DENO_DIR = Deno.env.get("DENO_DIR") ?? `${home}/.cache/deno`;
  return { ...env, HOME: TEST_HOME, NO_COLOR: "1", ...extra };
}

export function agentCommand(args: string[], opts: RunOptions = {}): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...AGENT_FLAGS, MAIN, ...args],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(opts.env),
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
}

export async function runAgent(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  const child = agentCommand(args, opts).spawn();
  const ceiling = killAfter(child, opts.ceilingMs);
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = new Response(child.stdout).text();
  const err = new Response(child.stderr).text();
  await opts.onSpawn?.(child);
  const status = await child.status;
  ceiling.disarm();
  return {
    code: status.code,
    stdout: await out,
    stderr: (await err) + ceiling.note(),
    ms: performance.now() - started,
  };
}

/** A guard that kills a child still running after `ms` (no guard when `ms` is undefined). */
export interface Ceiling {
  disarm(): void;
  /** A line for stderr when the guard killed the child, else "". */
  note(): string;
}

/**
 * Kills `child` and the processes it started (a launcher's program) with
 * SIGKILL if it is still running after `ms`; see {@link RunOptions.ceilingMs}.
 */
export function killAfter(child: Deno.ChildProcess, ms?: number): Ceiling {
  let fired = false;
  const timer = ms === undefined ? undefined : setTimeout(() => {
    fired = true;
    for (const pid of [...descendants(child.pid), child.pid]) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* exited meanwhile */ }
    }
  }, ms);
  return {
    disarm: () => clearTimeout(timer),
    note: () => fired ? `\n[the test killed the program: still running after ${ms} ms]\n` : "",
  };
}

/** A config file in a temporary directory of its own, removed when disposed. */
export interface TempConfig extends AsyncDisposable {
  /** The config file. */
  readonly path: string;
}

/** Writes a config file into a temporary directory: `await using config = await tempConfig(toml)`. */
export async function tempConfig(toml: string): Promise<TempConfig> {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-config-" });
  const config = { path: `${dir}/config.toml`, [Symbol.asyncDispose]: () => removeTree(dir) };
  try {
    await Deno.writeTextFile(config.path, toml);
  } catch (e) {
    await removeTree(dir);
    throw e;
  }
  return config;
}

/** The processes `pid` started, and theirs, from /proc (none where it cannot be read). */
function descendants(pid: number): number[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`);
  } catch {
    return [];
  }
  const kids = text.trim().split(/\s+/).filter(Boolean).map(Number);
  return kids.flatMap((k) => [...descendants(k), k]);
}

/**
 * Resolves when `cond` holds, polling; rejects after `ms`, a ceiling for a
 * condition that never comes (generous by default: the machine may be busy).
 */
export async function waitFor(cond: () => boolean, ms = 60_000, what = "condition"): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
