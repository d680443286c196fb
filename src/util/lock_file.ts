/**
 * Lock files (`flock`) of the state directory. A path that holds anything but
 * a regular file is refused in one line naming it: a symbolic link would
 * create or lock a file elsewhere, and a FIFO or a device put in a lock's
 * place would make a command hang. The file is opened for reading and
 * writing, which never waits (opening a FIFO for writing alone waits for a
 * reader, in a call no signal cuts short), and checked again once open, so a
 * FIFO put there between the look and the open is refused too.
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

/**
 * Opens (creating it, mode 0600) the lock file at `path`; a
 * `NotRegularFileError` for a symbolic link or anything but a regular file.
 */
export async function openLockFile(path: string): Promise<Deno.FsFile> {
  const seen = await Deno.lstat(path).catch((e) => {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  });
  if (seen && !seen.isFile) {
    const kind = seen.isSymlink ? "a symbolic link" : kindOf(seen);
    throw notRegular(path, kind, "remove it (the program makes a new lock file)");
  }
  const file = await Deno.open(path, {
    read: true,
    write: true,
    create: true,
    mode: PRIVATE_FILE_MODE,
  });
  try {
    const info = await file.stat();
    if (!info.isFile) {
      throw notRegular(path, kindOf(info), "remove it (the program makes a new lock file)");
    }
  } catch (e) {
    file.close();
    throw e;
  }
  return file;
}

/** Runs `body` holding the lock file at `path` (other processes wait). */
export async function withLockFile<T>(path: string, body: () => Promise<T>): Promise<T> {
  const lock = await openLockFile(path);
  try {
    await lock.lock(true);
    return await body();
  } finally {
    lock.close(); // closing releases the lock
  }
}
