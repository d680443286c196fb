/**
 * `accel-agent permissions`: prints the `deno run` grant flags for the
 * current configuration, one line (or `--json`: the flags and the hosts).
 *
 * @module
 */
import { loadConfig } from "../config/mod.ts";
import type { Invocation } from "./args.ts";
import { Exit } from "./exit.ts";
import type { Io } from "./io.ts";
import { grantFlags, netHosts } from "./permissions.ts";

export async function runPermissions(inv: Invocation, io: Io): Promise<number> {
  const { config } = await loadConfig({ path: inv.config, env: { get: io.env }, cwd: io.cwd });
  const flags = grantFlags(config);
  io.out(
    inv.json
      ? `${JSON.stringify({ flags, net: netHosts(config) }, null, 2)}\n`
      : `${flags.join(" ")}\n`,
  );
  return Exit.OK;
}
