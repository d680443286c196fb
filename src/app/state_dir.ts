/**
 * The state directory as the program finds it. What the program creates is
 * 0700/0600 (`src/util/private_files.ts`), but a state directory an earlier
 * version made under umask 022 (0755 directories, 0644 files), or one
 * someone opened since, would stay open: the audit, plans, sessions and
 * scans readable by every user of the console. So before a command uses it:
 *
 * - the state directory, or one of the program's own directories in it,
 *   that other users can write is refused in one line (anything in it may
 *   have been put there by someone else: a session `--resume` would hand
 *   the model, a plan, an audit file), as the keys directory is;
 * - one they can only read is closed: it and what is in it, where it is
 *   the operator's, become 0700 and 0600 (the files directly in the state
 *   directory too, not its other directories, which may be anything).
 *
 * The keys directory has its own, stricter check (`src/safety/keys.ts`).
 * The sandbox's run directories, when under the state directory, are not
 * walked (they are pruned to the newest `keep_runs`).
 *
 * @module
 */
import { CliError, Exit } from "./exit.ts";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../util/private_files.ts";

/** The program's own directories in the state directory. */
const OWN_DIRS = ["audit", "plans", "scans", "sessions", "running", "approvals", "elog", "index"];

/** Refuses a state directory others can write; closes one they can read. */
export async function closeStateDir(stateDir: string): Promise<void> {
  const root = await statOf(stateDir);
  if (!root?.isDirectory) return; // made (0700) when first written
  refuseWritable(stateDir, root);
  const dirs = [];
  for (const name of OWN_DIRS) {
    const path = `${stateDir}/${name}`;
    const info = await statOf(path);
    if (!info?.isDirectory) continue;
    refuseWritable(path, info);
    dirs.push({ path, info });
  }
  const me = ownUid();
  // Closing is done as far as it can be: what cannot be changed (not the operator's) stays.
  try {
    if (openTo(root) && mine(root, me)) await Deno.chmod(stateDir, PRIVATE_DIR_MODE);
    // Files directly in it (the audit's head, the history): closed whatever the directory's mode.
    for await (const e of Deno.readDir(stateDir)) {
      if (e.isFile) await closeEntry(`${stateDir}/${e.name}`, me);
    }
    for (const { path, info } of dirs) {
      if (openTo(info) && mine(info, me)) await closeTree(path, me);
    }
  } catch {
    // a state directory that cannot be read or changed fails where it is used, with its own line
  }
}

/** The one line for a directory others can write. */
function refuseWritable(path: string, info: Deno.FileInfo): void {
  const bits = (info.mode ?? 0) & 0o777;
  if (!(bits & 0o022)) return;
  throw new CliError(
    `${path}: the state directory can be written by other users (mode ${bits.toString(8)}); ` +
      `check what is in it, then run chmod 700 ${path}`,
    Exit.USAGE,
  );
}

/** `dir` and everything below it (never following a link) made 0700 / 0600 where it is open. */
async function closeTree(dir: string, me: number | undefined): Promise<void> {
  await Deno.chmod(dir, PRIVATE_DIR_MODE);
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) {
      const info = await Deno.lstat(path);
      if (mine(info, me)) await closeTree(path, me);
    } else if (e.isFile) await closeEntry(path, me);
  }
}

async function closeEntry(path: string, me: number | undefined): Promise<void> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (info?.isFile && openTo(info) && mine(info, me)) await Deno.chmod(path, PRIVATE_FILE_MODE);
}

function openTo(info: Deno.FileInfo): boolean {
  return ((info.mode ?? 0) & 0o077) !== 0;
}

function mine(info: Deno.FileInfo, me: number | undefined): boolean {
  return me === undefined || info.uid === null || info.uid === me;
}

async function statOf(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** This process's user id, or undefined where it cannot be asked (no `--allow-sys=uid`). */
function ownUid(): number | undefined {
  try {
    return Deno.uid() ?? undefined;
  } catch {
    return undefined;
  }
}
