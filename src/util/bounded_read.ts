/**
 * The one reader of files: every file the program reads (config, site,
 * limits, plans, skills, agents, `exec FILE`, caches, sessions, history,
 * audit, synonyms, …) goes through it, so none can be a device, a FIFO or
 * a file of any size: a path that names a FIFO, a device (`/dev/zero`), a
 * socket or a directory is refused, and no more than a byte cap is read.
 * `tests/architecture/file_reads_test.ts` keeps other reads out of `src/`.
 *
 * The file is opened with `O_NONBLOCK` (through `node:fs`, as `Deno.open`
 * takes no flags) and then checked with `fstat`: opening a FIFO without it
 * waits for a writer for ever, and a check by path before the open can be
 * raced by a FIFO put in its place. Nothing is read from anything but a
 * regular file. Errors are one line naming the file, what it is, and, given
 * `fix`, what to do; a missing file is Deno's `NotFound` (callers treat
 * absence as they always did).
 *
 * `glance_read.ts` is the exception: before `node:fs` is loaded (the REPL's
 * early prompt, where loading it costs a fifth of the time to the prompt)
 * it opens with `Deno.open` and watches the path meanwhile.
 *
 * @example
 * ```ts
 * import { readRegularText } from "./bounded_read.ts";
 * const text = await readRegularText("configs/default.toml", 1 << 20, {
 *   fix: "pass a config file to --config",
 * });
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

/** How a file is named in messages, and what the operator should do about a bad one. */
export interface ReadOptions {
  /** Names the file in messages (default: the path). */
  shown?: string;
  /** Said after a refusal: "point [safety] limits_file at the limits file". */
  fix?: string;
}

/** The largest skill, agent definition or system prompt file read: text a model reads whole. */
export const MAX_DEFINITION_BYTES = 1 << 20;

/** "1 MiB", "64 KiB", "512 bytes". */
export function bytesText(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** What kind of file a stat describes, for messages. */
interface Kind {
  isFile: boolean;
  isDirectory: boolean;
  isFifo: boolean | null;
  isCharDevice: boolean | null;
  isBlockDevice: boolean | null;
  isSocket: boolean | null;
}

/** What kind of file a stat describes, for messages ("a FIFO (named pipe)"). */
export function kindOf(info: Kind): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a regular file";
}

/** The refusal of a file that is `kind`, in the reader's words. */
export function notRegular(shown: string, kind: string, fix?: string): NotRegularFileError {
  return new NotRegularFileError(
    `${shown}: is ${kind}, not a regular file${fix ? `; ${fix}` : ""}`,
  );
}

/** The refusal of a file past `maxBytes`, in the reader's words. */
export function tooLarge(shown: string, maxBytes: number, fix?: string): TooLargeError {
  return new TooLargeError(`${shown}: larger than ${bytesText(maxBytes)}${fix ? `; ${fix}` : ""}`);
}

/** What the reader uses of `node:fs`, declared here: naming the module's types would put it in the graph. */
interface NodeStats {
  size: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}
interface NodeFileHandle {
  stat(): Promise<NodeStats>;
  read(
    buf: Uint8Array,
    offset: number,
    length: number,
    position: null,
  ): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}
interface NodeFs {
  constants: { O_RDONLY: number; O_NONBLOCK: number };
  promises: { open(path: string, flags: number): Promise<NodeFileHandle> };
  openSync(path: string, flags: number): number;
  fstatSync(fd: number): NodeStats;
  statSync(path: string): NodeStats;
  readSync(fd: number, buf: Uint8Array, offset: number, length: number, position: null): number;
  closeSync(fd: number): void;
}
let nodeFs: Promise<NodeFs> | undefined;
/** `node:fs`, loaded on the first read (loading it starts Node compatibility, about 30 ms here). */
function fsModule(): Promise<NodeFs> {
  // Named through a variable: a literal `node:` import anywhere in the module graph makes Deno
  // start Node compatibility with the program, which the REPL's early prompt must not wait for.
  const specifier = "node:fs";
  return nodeFs ??= (import(specifier) as Promise<NodeFs & { default?: NodeFs }>).then((m) =>
    nodeFsSync = m.default ?? m
  );
}
/** `node:fs` once loaded, for {@link readRegularTextSync}. */
let nodeFsSync: NodeFs | undefined;

/** A file opened for reading that is known to be a regular file. */
export interface RegularFile {
  /** Its size when opened. */
  readonly size: number;
  /** Reads into `buf` from the current position; 0 at the end. */
  read(buf: Uint8Array): Promise<number>;
  close(): Promise<void>;
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
 * Opens the regular file at `path` for reading without waiting on a FIFO;
 * throws {@link NotRegularFileError} for anything else and Deno's errors
 * (NotFound, PermissionDenied, NotCapable) as they come.
 */
export async function openRegular(path: string, opts: ReadOptions = {}): Promise<RegularFile> {
  const shown = opts.shown ?? path;
  const fs = await fsModule();
  const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;
  let handle;
  try {
    handle = await fs.promises.open(path, flags);
  } catch (e) {
    throw unopenable(e, () => fs.statSync(path), shown, opts.fix);
  }
  let size: number;
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw notRegular(shown, kindOf(nodeKind(st)), opts.fix);
    size = st.size;
  } catch (e) {
    await handle.close().catch(() => {});
    throw denoError(e);
  }
  return {
    size,
    read: async (buf) => {
      try {
        return (await handle.read(buf, 0, buf.byteLength, null)).bytesRead;
      } catch (e) {
        throw denoError(e);
      }
    },
    close: () => handle.close().catch(() => {}),
  };
}

/**
 * The bytes of the regular file at `path`, at most `maxBytes`. Throws
 * {@link NotRegularFileError} for anything else, {@link TooLargeError} past
 * the cap (before reading, when the size says so), and Deno's own errors
 * (NotFound, PermissionDenied) as they come.
 */
export async function readRegularBytes(
  path: string,
  maxBytes: number,
  opts: ReadOptions = {},
): Promise<Uint8Array> {
  const shown = opts.shown ?? path;
  const file = await openRegular(path, opts);
  try {
    if (file.size > maxBytes) throw tooLarge(shown, maxBytes, opts.fix);
    return await readAll((b) => file.read(b), maxBytes, () => tooLarge(shown, maxBytes, opts.fix));
  } finally {
    await file.close();
  }
}

/** {@link readRegularBytes} as UTF-8 text (bad sequences become U+FFFD). */
export async function readRegularText(
  path: string,
  maxBytes: number,
  opts: ReadOptions | string = {},
): Promise<string> {
  const o = typeof opts === "string" ? { shown: opts } : opts;
  return new TextDecoder().decode(await readRegularBytes(path, maxBytes, o));
}

/**
 * {@link readRegularText} for a synchronous reader (a chart drawn inside an
 * event handler); the same refusals. It needs `node:fs` loaded, which the
 * first asynchronous read (the config's, at start) or {@link loadSyncReader} does.
 */
export function readRegularTextSync(
  path: string,
  maxBytes: number,
  opts: ReadOptions = {},
): string {
  const shown = opts.shown ?? path;
  if (nodeFsSync === undefined) {
    throw new Error(`${shown}: not read (the file reader is not loaded yet)`);
  }
  const fs = nodeFsSync;
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw unopenable(e, () => fs.statSync(path), shown, opts.fix);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw notRegular(shown, kindOf(nodeKind(st)), opts.fix);
    if (st.size > maxBytes) throw tooLarge(shown, maxBytes, opts.fix);
    const chunks: Uint8Array[] = [];
    let total = 0;
    const buf = new Uint8Array(Math.min(maxBytes + 1, 1 << 16));
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.byteLength, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge(shown, maxBytes, opts.fix);
      chunks.push(buf.slice(0, n));
    }
    return new TextDecoder().decode(join(chunks, total));
  } catch (e) {
    throw denoError(e);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes {@link readRegularTextSync} usable (it cannot load `node:fs` itself). */
export async function loadSyncReader(): Promise<void> {
  await fsModule();
}

/** Everything `read` gives, or the error `over` makes once past `maxBytes`. */
export async function readAll(
  read: (buf: Uint8Array) => Promise<number>,
  maxBytes: number,
  over: () => Error,
): Promise<Uint8Array> {
  const buf = new Uint8Array(Math.min(maxBytes + 1, 1 << 16));
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const n = await read(buf);
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw over();
    chunks.push(buf.slice(0, n));
  }
  return join(chunks, total);
}

function join(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]?.byteLength === total) return chunks[0];
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.byteLength;
  }
  return all;
}

function nodeKind(st: NodeStats): Kind {
  return {
    isFile: st.isFile(),
    isDirectory: st.isDirectory(),
    isFifo: st.isFIFO(),
    isCharDevice: st.isCharacterDevice(),
    isBlockDevice: st.isBlockDevice(),
    isSocket: st.isSocket(),
  };
}

/**
 * Why an open failed: a socket (and a device without a driver) cannot be
 * opened at all (`ENXIO`), which is said as what it is; others as Deno's errors.
 */
function unopenable(
  e: unknown,
  stat: () => NodeStats,
  shown: string,
  fix: string | undefined,
): unknown {
  const code = e instanceof Error && "code" in e ? e.code : undefined;
  if (code === "ENXIO" || code === "ENODEV") {
    try {
      return notRegular(shown, kindOf(nodeKind(stat())), fix);
    } catch {
      // gone meanwhile: the open's own error
    }
  }
  return denoError(e);
}

/** Node's errors (`ENOENT`, …) as Deno's, which the callers know; ours and Deno's as they are. */
function denoError(e: unknown): unknown {
  if (!(e instanceof Error) || !("code" in e) || typeof e.code !== "string") return e;
  if (e instanceof NotRegularFileError || e instanceof TooLargeError) return e;
  const errno = "errno" in e && typeof e.errno === "number" ? Math.abs(e.errno) : undefined;
  // "ENOENT: no such file or directory, open '/x'" → "No such file or directory (os error 2)"
  const what = /^[A-Z0-9]+: ([^,]+)/.exec(e.message)?.[1] ?? e.message;
  const message = `${what.charAt(0).toUpperCase()}${what.slice(1)}${
    errno !== undefined ? ` (os error ${errno})` : ""
  }`;
  const Kind = {
    ENOENT: Deno.errors.NotFound,
    EACCES: Deno.errors.PermissionDenied,
    EPERM: Deno.errors.PermissionDenied,
    EISDIR: Deno.errors.IsADirectory,
    ENOTDIR: Deno.errors.NotADirectory,
    ELOOP: Deno.errors.FilesystemLoop,
  }[e.code];
  return Kind ? new Kind(message) : new Error(message);
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
  return new TextDecoder().decode(join(chunks, total));
}

/** Whether `e` is a refusal of the reader (no regular file, or past the cap): its message is the whole line. */
export function isRefusal(e: unknown): e is NotRegularFileError | TooLargeError {
  return e instanceof NotRegularFileError || e instanceof TooLargeError;
}
