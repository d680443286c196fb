/**
 * Each sandbox process has its own Deno cache (`DENO_DIR`) inside its run
 * directory, thrown away with it: Deno writes transpiled modules and code
 * cache there outside the permission system, so whatever Python makes Deno
 * load is cached there and nowhere else.
 *
 * A fresh cache means transpiling the sandbox's modules and compiling
 * Pyodide's JavaScript again at every start. So the cache of a process that
 * has started but not yet run anything is kept once as a seed (beside the
 * memory snapshot, named after the Deno version) and copied into each new
 * process's cache. The seed only ever holds what our own start-up loaded.
 *
 * @module
 */
import { makePrivateDirSync, PRIVATE_FILE_MODE } from "../util/private_files.ts";

/** The seed's directory for a snapshot path, or undefined without one. */
export function seedDir(snapshotPath: string | undefined): string | undefined {
  if (!snapshotPath) return undefined;
  return `${snapshotPath.slice(0, snapshotPath.lastIndexOf("/"))}/deno-cache-${Deno.version.deno}`;
}

/** Makes `denoDir` a copy of the seed (or empty where there is none yet). */
export function prepareDenoDir(denoDir: string, seed: string | undefined): void {
  makePrivateDirSync(denoDir);
  if (!seed) return;
  try {
    copyTree(seed, denoDir);
  } catch {
    // A damaged or missing seed: the process starts with an empty cache (slower, nothing else).
  }
}

/**
 * Keeps the cache of a process that has started and run nothing as the
 * seed, if there is none: copied beside it and renamed, so a reader never
 * sees half of one.
 */
export async function saveSeed(denoDir: string, seed: string): Promise<void> {
  if (await exists(seed)) return;
  const tmp = `${seed}.${crypto.randomUUID()}.tmp`;
  try {
    copyTree(denoDir, tmp);
    await Deno.rename(tmp, seed);
  } catch {
    // Another process saved one first, or the disk is full: no seed this time.
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** Copies a tree; the copies are private (0700, 0600) whatever mode Deno wrote the cache with. */
function copyTree(from: string, to: string): void {
  makePrivateDirSync(to);
  for (const e of Deno.readDirSync(from)) {
    if (e.isDirectory) copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
    else if (e.isFile) {
      Deno.copyFileSync(`${from}/${e.name}`, `${to}/${e.name}`);
      Deno.chmodSync(`${to}/${e.name}`, PRIVATE_FILE_MODE);
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
