/**
 * Reading what an operator points the program at — a config file, stdin —
 * without trusting it to be small or even a file: a path that names a FIFO,
 * a device (`/dev/zero`) or a socket is refused after a `stat`, before it is
 * opened (opening a FIFO blocks until a writer comes), and no more than a
 * byte cap is read. Errors are one line naming the path and the limit.
 *
 * @example
 * ```ts
 * import { readRegularText } from "./bounded_read.ts";
 * const text = await readRegularText("configs/default.toml", 1 << 20);
 * ```
 *
 * @module
 */

/** The path is no regular file (a FIFO, a device, a socket, a directory). */
export class NotRegularFileError extends Error {
  override name = "NotRegularFileError";
}

/** The input holds more bytes than the cap. */
export class TooLargeError extends Error {
  override name = "TooLargeError";
}

/** "1 MiB", "64 KiB", "512 bytes". */
export function bytesText(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** What kind of non-regular file `info` describes, for messages. */
function kindOf(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a regular file";
}

/**
 * Throws {@link NotRegularFileError} when something other than a regular
 * file is at `path` (a FIFO, whose open blocks; a device; a directory); a
 * path with nothing at it is fine. For a file about to be opened for writing.
 */
export async function refuseIrregular(path: string, shown = path): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  if (!info.isFile) {
    throw new NotRegularFileError(`${shown}: is ${kindOf(info)}, not a regular file`);
  }
}

/**
 * The text of the regular file at `path`, at most `maxBytes` long. Throws
 * {@link NotRegularFileError} for anything else, {@link TooLargeError} past the
 * cap, and Deno's own errors (NotFound, PermissionDenied) as they come.
 * `shown` names the file in messages (default: `path`).
 */
export async function readRegularText(
  path: string,
  maxBytes: number,
  shown = path,
): Promise<string> {
  const info = await Deno.stat(path);
  if (!info.isFile) {
    throw new NotRegularFileError(`${shown}: is ${kindOf(info)}, not a regular file`);
  }
  const file = await Deno.open(path, { read: true });
  try {
    // Swapped for something else between the stat and the open: check what was opened.
    const opened = await file.stat();
    if (!opened.isFile) {
      throw new NotRegularFileError(`${shown}: is ${kindOf(opened)}, not a regular file`);
    }
    const buf = new Uint8Array(Math.min(maxBytes + 1, 1 << 16));
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const n = await file.read(buf);
      if (n === null) break;
      total += n;
      if (total > maxBytes) {
        throw new TooLargeError(`${shown}: larger than ${bytesText(maxBytes)}`);
      }
      chunks.push(buf.slice(0, n));
    }
    return decode(chunks, total);
  } finally {
    file.close();
  }
}

function decode(chunks: Uint8Array[], total: number): string {
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * All of `stream` as UTF-8 text, or a {@link TooLargeError} carrying
 * `tooLarge` as soon as more than `maxBytes` arrived (the stream is cancelled:
 * `/dev/zero` on stdin ends at the cap, not at the memory's end).
 */
export async function readCapped(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  tooLarge: string,
): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new TooLargeError(tooLarge);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return decode(chunks, total);
}
