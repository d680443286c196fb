/**
 * Starts a display's launcher detached: its own session and process group
 * (`detached`, which calls setsid), no standard streams, and unref'ed, so the
 * agent never waits on it, a Ctrl-C at the agent's prompt does not reach it,
 * and it lives on when the agent exits.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";
import { DisplayError } from "./catalogue.ts";

/** What was started. */
export interface Launched {
  argv: string[];
  pid: number;
}

/** Starts a program; the seam tests replace. */
export type Spawn = (argv: string[]) => Launched;

/** Spawns `argv` (program first) detached; a program that cannot be started is a DisplayError. */
export const spawnDetached: Spawn = (argv) => {
  const [program, ...args] = argv;
  if (program === undefined) throw new DisplayError("the launcher's command is empty");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
  } catch (e) {
    throw new DisplayError(spawnFailure(program, e));
  }
  child.unref();
  // Reaped when it ends, so it leaves no zombie; nothing waits for it.
  child.status.catch(() => {});
  return { argv, pid: child.pid };
};

function spawnFailure(program: string, e: unknown): string {
  if (e instanceof Deno.errors.NotFound) {
    return `cannot start ${program}: not found; install it or set the launcher's command in [launchers]`;
  }
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    return `cannot start ${program}: not in the run grant; it must be the configured launcher of a kind the catalogue uses, ` +
      "found on PATH when the program started (accel-agent permissions lists those left out)";
  }
  return `cannot start ${program}: ${errorMessage(e)}`;
}
