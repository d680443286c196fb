/**
 * Lock files (`flock`) of the state directory: opened for reading and
 * writing, which never waits (opening a FIFO for writing alone waits for a
 * reader, in a call no signal cuts short), then refused unless they are a
 * regular file, so a FIFO or a device put in a lock's place is one line
 * naming it rather than a command that hangs.
 *
 * @example
 * ```ts
 * import { openLockFile } from "./lock_file.ts";
 * using lock = await openLockFile(`${auditDir}/.lock`);
 * await lock.lock(true);
 * ```
 *
 * @module
 */
import { kindOf, notRegular } from "./bounded_read.ts";

/** Opens (creating it, mode 0600) the lock file at `path`; a {@link NotRegularFileError} for anything but a regular file. */
export async function openLockFile(path: string): Promise<Deno.FsFile> {
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  try {
    const info = await file.stat();
    if (!info.isFile) throw notRegular(path, kindOf(info), "remove it (it is made again)");
  } catch (e) {
    file.close();
    throw e;
  }
  return file;
}
