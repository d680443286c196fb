/**
 * A lock file held while a body runs: opened (created 0600 when missing),
 * locked exclusively (other processes wait), released when the body ends.
 * A path that holds anything but a regular file is refused in one line
 * naming it, before it is opened: a FIFO would make the open wait for a
 * writer for ever, and a symbolic link would create or lock a file
 * elsewhere.
 *
 * @example
 * ```ts
 * import { withLockFile } from "./lock_file.ts";
 * await withLockFile(`${dir}/x.lock`, async () => {});
 * ```
 *
 * @module
 */
import { kindOf, notRegular } from "./bounded_read.ts";
import { PRIVATE_FILE_MODE } from "./private_files.ts";

/** Runs `body` holding the lock file at `path`. */
export async function withLockFile<T>(path: string, body: () => Promise<T>): Promise<T> {
  const info = await Deno.lstat(path).catch((e) => {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  });
  if (info && !info.isFile) {
    const kind = info.isSymlink ? "a symbolic link" : kindOf(info);
    throw notRegular(path, kind, "remove it (the program makes a new lock file)");
  }
  const lock = await Deno.open(path, { create: true, write: true, mode: PRIVATE_FILE_MODE });
  try {
    await lock.lock(true);
    return await body();
  } finally {
    lock.close(); // closing releases the lock
  }
}
