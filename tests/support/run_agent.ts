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
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = new Response(child.stdout).text();
  const err = new Response(child.stderr).text();
  await opts.onSpawn?.(child);
  const status = await child.status;
  return {
    code: status.code,
    stdout: await out,
    stderr: await err,
    ms: performance.now() - started,
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

/** Resolves when `cond` holds, polling; rejects after `ms`. */
export async function waitFor(cond: () => boolean, ms = 10_000, what = "condition"): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
