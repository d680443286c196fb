/**
 * The work root's housekeeping: each run's directory (named by the program
 * in creation order), what it takes on disk (for the quota), and removing
 * all but the newest run directories.
 *
 * A run directory holds `work/` (the files the run left, written by the
 * sandbox process when the run ends) and `deno/` (the process's private
 * Deno cache, removed when the process is gone).
 *
 * @module
 */
import { INODE_BYTES, PATH_MAX } from "./work_out.ts";

let sequence = 0;

/**
 * The name prefix of a new run directory: the creation time and a counter,
 * recorded by the program (a file's mtime is whatever its writer set).
 */
export function runPrefix(now = Date.now()): string {
  sequence = (sequence + 1) % 1_000_000;
  return `run-${String(now).padStart(15, "0")}-${String(sequence).padStart(6, "0")}-`;
}

/** When a run directory was made, from its name; 0 (oldest) for names not made by {@link runPrefix}. */
export function runStamp(name: string, now = Date.now()): number {
  const m = /^run-(\d{15})-(\d{6})-/.exec(name);
  if (!m) return 0;
  const stamp = Number(m[1]) * 1_000_000 + Number(m[2]);
  // Made by a clock that was wrong: not newer than everything for ever.
  return Number(m[1]) > now + DAY_MS ? 0 : stamp;
}

const DAY_MS = 24 * 3600 * 1000;

/** What a directory takes on disk, or why it could not be measured. */
export type DiskUse = { bytes: number } | { error: string };

/**
 * Bytes `dir` takes on disk, counted as the disk counts them: each entry's
 * allocated blocks (`stat`'s blocks, the size where there are none), an
 * inode and its name. Stops once past `stopAbove`. Fails closed: a
 * directory that cannot be read or a path too long to name is an error,
 * never a smaller number. Symlinks are not followed.
 */
export async function diskUse(dir: string, stopAbove = Infinity): Promise<DiskUse> {
  const encoder = new TextEncoder();
  let bytes = 0;
  const pending = [dir];
  while (pending.length && bytes <= stopAbove) {
    const at = pending.pop() as string;
    try {
      for await (const e of Deno.readDir(at)) {
        const path = `${at}/${e.name}`;
        if (encoder.encode(path).length >= PATH_MAX) {
          return { error: `a path in it is longer than ${PATH_MAX} bytes` };
        }
        const info = await Deno.lstat(path);
        const blocks = info.blocks ?? Math.ceil(info.size / 512);
        bytes += blocks * 512 + INODE_BYTES + encoder.encode(e.name).length;
        if (info.isDirectory) pending.push(path);
        if (bytes > stopAbove) break;
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound && at === dir) return { bytes: 0 };
      if (e instanceof Deno.errors.NotFound) continue; // removed meanwhile
      return { error: `${at.slice(dir.length + 1) || "it"} could not be read (${errorName(e)})` };
    }
  }
  return { bytes };
}

/**
 * Removes a tree however it was left: directories made unreadable are made
 * readable again first. Resolves false when something stays.
 */
export async function removeTree(path: string): Promise<boolean> {
  try {
    await Deno.remove(path, { recursive: true });
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return true;
  }
  const pending = [path];
  while (pending.length) {
    const at = pending.pop() as string;
    try {
      await Deno.chmod(at, 0o700);
      for await (const e of Deno.readDir(at)) {
        if (e.isDirectory) pending.push(`${at}/${e.name}`);
      }
    } catch {
      // what cannot be reached is reported below
    }
  }
  try {
    await Deno.remove(path, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes `run-*` directories beyond the newest `keep` (never those of
 * `live` processes, which count towards `keep`), newest by the creation
 * order in their names.
 */
export async function pruneRuns(
  root: string,
  keep: number,
  live: readonly string[],
): Promise<void> {
  try {
    const runs: { path: string; stamp: number }[] = [];
    for await (const e of Deno.readDir(root)) {
      if (!e.isDirectory || !e.name.startsWith("run-")) continue;
      const path = `${root}/${e.name}`;
      if (!live.includes(path)) runs.push({ path, stamp: runStamp(e.name) });
    }
    runs.sort((a, b) => b.stamp - a.stamp);
    for (const old of runs.slice(Math.max(0, keep - live.length))) await removeTree(old.path);
  } catch {
    // The work root is housekeeping, never a reason for a run to fail.
  }
}

function errorName(e: unknown): string {
  return e instanceof Error ? e.name : "unknown error";
}
