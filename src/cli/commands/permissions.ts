/**
 * `accel-agent permissions`: prints the `deno run` grant flags for the
 * current configuration, one line (or `--json`: the flags and each list),
 * and on stderr each program the configuration names that is not on this
 * console's PATH and so is not granted (`notFound` under `--json`).
 *
 * @module
 */
import { loadConfig } from "../../config/mod.ts";
import type { Invocation } from "../args/args.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { computeGrants, GrantError, grantFlags } from "../../app/permissions.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";

export async function runPermissions(inv: Invocation, io: Io): Promise<number> {
  const loaded = await loadConfig({ path: inv.config, env: { get: io.env }, cwd: io.cwd });
  let grants;
  try {
    grants = computeGrants(loaded, { env: io.env, cwd: io.cwd });
  } catch (e) {
    if (e instanceof GrantError) throw new CliError(`config error: ${e.message}`, Exit.USAGE);
    throw e;
  }
  const flags = grantFlags(grants);
  io.out(
    inv.json ? `${terminalJson({ flags, ...grants })}\n` : `${flags.map(shellWord).join(" ")}\n`,
  );
  // On stderr: stdout stays the flags alone, for `deno run $(accel-agent permissions) …`.
  if (!inv.json) {
    for (const m of grants.notFound ?? []) {
      io.err(
        `accel-agent: ${untrusted(m.program)} (${m.setting}) is not on this console's PATH: ` +
          "left out of --allow-run; install it or name it by its path\n",
      );
    }
  }
  return Exit.OK;
}

/** A flag as a shell reads it back: quoted only when it holds more than safe characters. */
function shellWord(flag: string): string {
  return /^[\w@%+=:,./-]+$/.test(flag) ? flag : `'${flag.replaceAll("'", `'\\''`)}'`;
}
