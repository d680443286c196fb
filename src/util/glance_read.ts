/**
 * The REPL's early prompt reads the config before anything else is loaded,
 * and `node:fs` (which the reader of `bounded_read.ts` opens with) would
 * cost it a fifth of its time. So this one read checks by `stat`, opens
 * with `Deno.open`, and watches the path while the open is under way.
 *
 * @module
 */
import {
  kindOf,
  notRegular,
  NotRegularFileError,
  readAll,
  type ReadOptions,
  tooLarge,
} from "./bounded_read.ts";

/** How long the glance waits for an open that the watch cannot explain. */
const GLANCE_DEADLINE_MS = 2000;

/**
 * The text of the regular file at `path`, for the REPL's early prompt,
 * before `node:fs` is loaded: checked by `stat`, opened with `Deno.open`,
 * and the path watched while the open is under way. A FIFO put in the
 * file's place after the check would make the open wait for a writer; the
 * watch sees the path change and refuses instead (the open left behind is
 * closed if it ever finishes; the program exits through `Deno.exit`). An
 * open still waiting after 2 s is given up on: the glance is only a first
 * look, and the full load that follows uses the reader that cannot wait.
 */
export async function glanceRegularText(
  path: string,
  maxBytes: number,
  opts: ReadOptions = {},
): Promise<string> {
  const shown = opts.shown ?? path;
  const before = await Deno.stat(path);
  if (!before.isFile) throw notRegular(shown, kindOf(before), opts.fix);
  if (before.size > maxBytes) throw tooLarge(shown, maxBytes, opts.fix);
  const opening = Deno.open(path, { read: true });
  let file: Deno.FsFile | undefined;
  opening.then((f) => file = f, () => {});
  const opened = opening.then(() => true, () => true);
  // The first look at the path is raced with the open itself, without a timer (the first
  // timer of a process costs about 25 ms, a fifth of the time to the prompt); later looks every 5 ms.
  const started = performance.now();
  for (let look = 0; file === undefined; look++) {
    // A FIFO swapped in and the file swapped back while the open waits would fool the watch:
    // the glance gives up instead (a slow disk only costs the early prompt).
    if (performance.now() - started > GLANCE_DEADLINE_MS) {
      opening.then((f) => f.close(), () => {});
      throw new Error(`${shown}: did not open within ${GLANCE_DEADLINE_MS / 1000} s`);
    }
    const wait = look === 0
      ? Deno.stat(path).then(() => false, () => false)
      : new Promise<false>((r) => setTimeout(() => r(false), 5));
    if (await Promise.race([opened, wait])) {
      file = await opening;
      break;
    }
    const now = await Deno.stat(path).catch(() => undefined);
    if (!now?.isFile || now.ino !== before.ino || now.dev !== before.dev) {
      opening.then((f) => f.close(), () => {});
      const what = now && !now.isFile ? ` (it is now ${kindOf(now)})` : "";
      throw new NotRegularFileError(
        `${shown}: was replaced while it was being opened${what}${opts.fix ? `; ${opts.fix}` : ""}`,
      );
    }
  }
  using handle = file;
  // Swapped for something else between the stat and the open: check what was opened.
  const info = await handle.stat();
  if (!info.isFile) throw notRegular(shown, kindOf(info), opts.fix);
  const bytes = await readAll(
    async (b) => (await handle.read(b)) ?? 0,
    maxBytes,
    () => tooLarge(shown, maxBytes, opts.fix),
  );
  return new TextDecoder().decode(bytes);
}

/**
 * Opens the regular file at `path` synchronously, without `node:fs`, for
 * the command line's search, which answers before the rest of the program
 * (and `node:fs`) is loaded: checked by `stat` before the open (opening a
 * FIFO would wait for a writer) and by `fstat` after it. Between the two
 * only someone who can write the file's directory could put a FIFO in its
 * place; it is used only for the operator's own config, state directory
 * and the program's shipped files, and the full load that follows any
 * doubt uses the reader that cannot wait.
 */
export function openPlainSync(path: string, opts: ReadOptions = {}): Deno.FsFile {
  const shown = opts.shown ?? path;
  const before = Deno.statSync(path);
  if (!before.isFile) throw notRegular(shown, kindOf(before), opts.fix);
  const file = Deno.openSync(path, { read: true });
  const info = file.statSync();
  if (!info.isFile) {
    file.close();
    throw notRegular(shown, kindOf(info), opts.fix);
  }
  return file;
}

/** The text of the regular file at `path`, at most `maxBytes`, read as {@link openPlainSync} opens it. */
export function readPlainTextSync(path: string, maxBytes: number, opts: ReadOptions = {}): string {
  const shown = opts.shown ?? path;
  using file = openPlainSync(path, opts);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const buf = new Uint8Array(Math.min(maxBytes + 1 - total, 1 << 16) || 1);
    const n = file.readSync(buf);
    if (n === null || n === 0) break;
    total += n;
    if (total > maxBytes) throw tooLarge(shown, maxBytes, opts.fix);
    chunks.push(buf.subarray(0, n));
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(out);
}
