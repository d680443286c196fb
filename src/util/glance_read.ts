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
