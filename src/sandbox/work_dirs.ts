/**
 * The work root's housekeeping: the size of a run directory (for the disk
 * quota) and removing all but the newest run directories.
 *
 * @module
 */

/**
 * Bytes under `dir`, counted until `stopAbove` is passed (a quota check
 * need not walk a huge directory to the end). Symlinks are not followed.
 */
export async function dirBytes(dir: string, stopAbove = Infinity): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length && total <= stopAbove) {
    const at = pending.pop()!;
    try {
      for await (const e of Deno.readDir(at)) {
        const path = `${at}/${e.name}`;
        if (e.isDirectory) pending.push(path);
        else if (e.isFile) total += (await Deno.lstat(path)).size;
        if (total > stopAbove) break;
      }
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

/** Removes `run-*` directories beyond the newest `keep` (never `current`). */
export async function pruneRuns(root: string, keep: number, current: string): Promise<void> {
  try {
    const runs: { path: string; mtime: number }[] = [];
    for await (const e of Deno.readDir(root)) {
      if (!e.isDirectory || !e.name.startsWith("run-")) continue;
      const path = `${root}/${e.name}`;
      if (path === current) continue;
      const info = await Deno.stat(path).catch(() => undefined);
      if (info) runs.push({ path, mtime: info.mtime?.getTime() ?? 0 });
    }
    runs.sort((a, b) => b.mtime - a.mtime);
    for (const old of runs.slice(Math.max(0, keep - 1))) {
      await Deno.remove(old.path, { recursive: true }).catch(() => {});
    }
  } catch {
    // The work root is housekeeping, never a reason for a run to fail.
  }
}
