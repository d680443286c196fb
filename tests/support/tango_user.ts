/**
 * A user's set-up on a TANGO facility, run as `deno task agent` runs the
 * program (through the launcher, with the grants the config gives): a config
 * file naming the REST server, a limits file and a state directory in a
 * temporary directory. The server is the value-serving fake
 * (`facility/fake_tango_rest.ts`) or the real TangoTest behind the REST
 * bridge (`facility/tango_server.ts`).
 *
 * @module
 */
import type { RunResult } from "./run_agent.ts";
import { removeTree } from "./temp.ts";
import { runAsUser, type UserRunOptions } from "./user_grants.ts";

/** What the set-up needs of a TANGO server. */
export interface TangoFacility {
  /** The `[facility]` and `[tango]` tables that select it. */
  config(): string;
  /** The environment holding its credentials, when it asks for any. */
  readonly env?: Record<string, string>;
}

export class TangoUser implements AsyncDisposable {
  private constructor(readonly dir: string, readonly server: TangoFacility) {}

  static async start(server: TangoFacility, limits: string): Promise<TangoUser> {
    const dir = await Deno.makeTempDir({ prefix: "accel-agent-tango-user-" });
    const user = new TangoUser(dir, server);
    try {
      await Deno.writeTextFile(`${dir}/limits.toml`, limits);
      await Deno.writeTextFile(
        user.configPath,
        `${server.config()}\n[state]\ndir = ${JSON.stringify(`${dir}/state`)}\n\n` +
          `[safety]\nlimits_file = "limits.toml"\n`,
      );
    } catch (e) {
      await removeTree(dir);
      throw e;
    }
    return user;
  }

  get configPath(): string {
    return `${this.dir}/config.toml`;
  }

  /** Writes a plan as JSON into the set-up's directory; returns its path. */
  async plan(plan: unknown, name = "plan.json"): Promise<string> {
    const path = `${this.dir}/${name}`;
    await Deno.writeTextFile(path, JSON.stringify(plan));
    return path;
  }

  /** Runs `accel-agent ARGS` through the launcher with this config, no terminal. */
  async run(args: string[], opts: UserRunOptions = {}): Promise<RunResult> {
    return await runAsUser(["--config", this.configPath, ...args], {
      ...opts,
      env: { ...this.server.env, ...opts.env },
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await removeTree(this.dir);
  }
}
