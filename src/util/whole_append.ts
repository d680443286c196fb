/**
 * Appends that either write a whole record or leave the file as it was: the
 * size before the append is noted, and any failure (a full disk, an I/O
 * error) truncates the file back to it before the error is passed on. The
 * audit and the session files append this way. The few file operations used
 * sit behind {@link AppendFs}, so tests can inject a file system that fails
 * after N bytes.
 *
 * @module
 */
import { errorMessage } from "./errors.ts";
import { readRegularBytes } from "./bounded_read.ts";

/** An open file appended to. */
export interface AppendHandle {
  /** The file's size now. */
  size(): Promise<number>;
  write(p: Uint8Array): Promise<number>;
  sync(): Promise<void>;
  truncate(len: number): Promise<void>;
  close(): void;
}

/** The file operations an append uses. */
export interface AppendFs {
  /** Opens `path` for appending, creating it (mode 0600) when absent. */
  open(path: string): Promise<AppendHandle>;
}

/** The real file system. */
export const realAppendFs: AppendFs = {
  async open(path) {
    const f = await Deno.open(path, { append: true, create: true, mode: 0o600 });
    return {
      size: async () => (await f.stat()).size,
      write: (p) => f.write(p),
      sync: () => f.sync(),
      truncate: (len) => f.truncate(len),
      close: () => f.close(),
    };
  },
};

/** An append failed; `cutBack` says whether the file was put back as it was. */
export class AppendError extends Error {
  override name = "AppendError";
  constructor(message: string, readonly cutBack: boolean) {
    super(message);
  }
}

/**
 * Appends `bytes` to `path` whole and syncs them. `then`, when given, runs
 * after the sync with the file still open (the audit replaces its head
 * there); if it fails, the append is undone too. Throws {@link AppendError}
 * with what happened and whether the file is as it was.
 */
export async function appendWhole(
  fs: AppendFs,
  path: string,
  bytes: Uint8Array,
  then?: () => Promise<void>,
): Promise<void> {
  const file = await fs.open(path);
  let before: number | undefined;
  try {
    before = await file.size();
    let off = 0;
    while (off < bytes.length) off += await file.write(bytes.subarray(off));
    await file.sync();
    await then?.();
  } catch (e) {
    const why = errorMessage(e);
    if (before === undefined) throw new AppendError(why, true);
    try {
      await file.truncate(before);
      await file.sync();
    } catch (cut) {
      throw new AppendError(
        `${why}; and it could not be cut back to ${before} bytes (${
          errorMessage(cut)
        }): its last line is torn and is cut off on the next start`,
        false,
      );
    }
    throw new AppendError(`${why}; ${path} was left as it was`, true);
  } finally {
    file.close();
  }
}

/**
 * Where a file's complete lines end: the bytes after its last newline are a
 * torn tail (an append that did not finish). Returns the length to keep and
 * the torn bytes (empty when the file ends in a newline).
 */
export function tornTail(bytes: Uint8Array): { keep: number; torn: Uint8Array } {
  const last = bytes.lastIndexOf(0x0a);
  const keep = last + 1;
  return { keep, torn: bytes.subarray(keep) };
}

/**
 * Cuts a torn tail off `path`: the torn bytes are appended to `<path>.torn`
 * (so nothing is lost), then the file is truncated to its complete lines.
 * Returns a one-line report, or undefined when the file had no torn tail.
 */
export async function cutTornTail(
  path: string,
  maxBytes = 256 << 20,
): Promise<string | undefined> {
  const bytes = await readRegularBytes(path, maxBytes);
  const { keep, torn } = tornTail(bytes);
  if (!torn.length) return undefined;
  const side = `${path}.torn`;
  await Deno.writeFile(side, new Uint8Array([...torn, 0x0a]), { append: true, mode: 0o600 });
  using f = await Deno.open(path, { write: true });
  await f.truncate(keep);
  await f.sync();
  return `${path}: its last line was torn (an append that did not finish, ${torn.length} bytes); ` +
    `it was cut off and kept in ${side}`;
}
