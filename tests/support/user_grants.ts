/**
 * Runs the program exactly as an operator does (`deno task agent`): through
 * `launch.ts`, which computes the grants from the configuration, so the
 * program under test never holds `-A`. Safety tests use this with a fake
 * EPICS facility on loopback, whose gateway records every write it receives:
 * "nothing was written" is then a fact seen on the wire.
 *
 * @module
 */
import { type FakeEpics, type FakeEpicsOptions, startFakeEpics } from "./facility/fake_epics.ts";
import { childEnv, killAfter, ROOT, type RunResult } from "./run_agent.ts";
import { removeTree } from "./temp.ts";

/** The flags of `deno task agent` (deno.json): the launcher reads, then runs main.ts with the grants. */
export const LAUNCHER_FLAGS = ["--allow-read", "--allow-env", "--allow-run"] as const;

export interface UserRunOptions {
  stdin?: string;
  env?: Record<string, string>;
  /** Called with the launcher's process once it runs (to send signals). */
  onSpawn?: (child: Deno.ChildProcess) => void | Promise<void>;
  /** Kills the launcher if still running after this long; see `RunOptions.ceilingMs`. */
  ceilingMs?: number;
}

/**
 * A user's set-up in a temporary directory: a config file, a limits file and
 * a state directory, on a fake EPICS facility. Disposing stops the fakes and
 * removes the directory.
 */
export class UserSetup implements AsyncDisposable {
  private constructor(
    readonly dir: string,
    readonly epics: FakeEpics,
  ) {}

  /**
   * `limits` is the limits file's TOML; `extra` is added to the config file
   * (after the `[facility]`, `[epics]`, `[state]` and `[safety]` tables it writes);
   * `epicsConfig` adds keys to the `[epics]` table.
   */
  static async start(
    opts: {
      limits?: string;
      extra?: string;
      safety?: string;
      epics?: FakeEpicsOptions;
      epicsConfig?: Record<string, string | number>;
    } = {},
  ): Promise<UserSetup> {
    const dir = await Deno.makeTempDir({ prefix: "accel-agent-user-" });
    const epics = startFakeEpics(opts.epics);
    const setup = new UserSetup(dir, epics);
    try {
      await Deno.writeTextFile(`${dir}/limits.toml`, opts.limits ?? DEFAULT_LIMITS);
      await Deno.writeTextFile(
        setup.configPath,
        `${epics.config(opts.epicsConfig)}\n[state]\ndir = ${JSON.stringify(`${dir}/state`)}\n\n` +
          `[safety]\nlimits_file = "limits.toml"\n${opts.safety ?? ""}\n${opts.extra ?? ""}\n`,
      );
    } catch (e) {
      await setup[Symbol.asyncDispose]();
      throw e;
    }
    return setup;
  }

  get configPath(): string {
    return `${this.dir}/config.toml`;
  }

  get stateDir(): string {
    return `${this.dir}/state`;
  }

  /** Every write the fake gateway received. */
  get writes(): { pv: string; value: unknown }[] {
    return this.epics.pvws.stats.writes;
  }

  /** Resolves once the fake gateway has received `n` writes. */
  writesReached(n: number): Promise<void> {
    return this.epics.pvws.writesReached(n);
  }

  /** Writes a file into the set-up's directory; returns its path. */
  async file(name: string, text: string): Promise<string> {
    const path = `${this.dir}/${name}`;
    await Deno.writeTextFile(path, text);
    return path;
  }

  /** Writes a plan as JSON into the set-up's directory; returns its path. */
  async plan(plan: unknown, name = "plan.json"): Promise<string> {
    return await this.file(name, JSON.stringify(plan));
  }

  /** The approval token `plan show PLAN --json` issues, as an operator's script gets it. */
  async token(plan: string): Promise<string> {
    const shown = await this.run(["plan", "show", plan, "--json"]);
    const token = JSON.parse(shown.stdout).approval?.token;
    if (shown.code !== 0 || typeof token !== "string") {
      throw new Error(`plan show issued no token (exit ${shown.code}): ${shown.stderr}`);
    }
    return token;
  }

  /** Runs `accel-agent ARGS` through the launcher with this config, no terminal. */
  async run(args: string[], opts: UserRunOptions = {}): Promise<RunResult> {
    return await runAsUser(["--config", this.configPath, ...args], opts);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.epics.close();
    await removeTree(this.dir);
  }
}

/** The limits a user's set-up has unless a test gives its own. */
export const DEFAULT_LIMITS = `[limits."SR:COR:H01:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001
`;

/** `accel-agent ARGS` as `deno task agent -- ARGS` runs it, with no terminal. */
export async function runAsUser(args: string[], opts: UserRunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`, ...args],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(opts.env),
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const ceiling = killAfter(child, opts.ceilingMs);
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const output = Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  await opts.onSpawn?.(child);
  const [status, [stdout, stderr]] = await Promise.all([child.status, output]);
  ceiling.disarm();
  return {
    code: status.code,
    stdout,
    stderr: stderr + ceiling.note(),
    ms: performance.now() - started,
  };
}

/**
 * The pid of the program the launcher started (main.ts), for a signal that
 * reaches it alone; waits until it exists.
 */
export async function programPid(launcher: Deno.ChildProcess, ms = 60_000): Promise<number> {
  const deadline = performance.now() + ms;
  for (;;) {
    try {
      const text = await Deno.readTextFile(`/proc/${launcher.pid}/task/${launcher.pid}/children`);
      const pid = Number(text.trim().split(/\s+/)[0]);
      if (pid > 0) return pid;
    } catch {
      // not started yet
    }
    if (performance.now() > deadline) throw new Error("the launcher started no program");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A plan that writes the gateway's corrector and then holds for ten minutes: one to stop mid-way. */
export function writeThenHold(value = 0.6, description = "trim H01 and watch") {
  return {
    description,
    actions: [
      { type: "write", device: "SR:COR:H01:SETPT", value, reason: "trim" },
      { type: "wait", seconds: 600, reason: "watch the orbit" },
    ],
  };
}
