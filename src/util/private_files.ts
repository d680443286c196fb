/**
 * What the program writes is its operator's: every directory it creates is
 * 0700 and every file 0600. The modes are given at creation, so a umask can
 * only take bits away (never give group or others a read); a file written
 * whole goes to a temporary name first and is renamed into place, and the
 * temporary file is removed on every failure (a full disk leaves nothing
 * half-written behind).
 *
 * @example
 * ```ts
 * import { makePrivateDir, writePrivateFile } from "./private_files.ts";
 * await makePrivateDir(`${stateDir}/plans`);
 * await writePrivateFile(`${stateDir}/plans/p.json`, "{}\n");
 * ```
 *
 * @module
 */

/** The mode of every directory the program creates. */
export const PRIVATE_DIR_MODE = 0o700;
/** The mode of every file the program creates. */
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `path` and any missing parents, each 0700; an existing directory is left as it is. */
export async function makePrivateDir(path: string): Promise<void> {
  await Deno.mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** {@link makePrivateDir}, synchronously. */
export function makePrivateDirSync(path: string): void {
  Deno.mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Writes `data` to `path` (mode 0600) whole or not at all: into a temporary
 * file beside it, then renamed over it. On any failure the temporary file is
 * removed and the error is thrown; `path` is as it was.
 */
export async function writePrivateFile(
  path: string,
  data: string | Uint8Array,
  opts: { fixedTemp?: boolean } = {},
): Promise<void> {
  // A fixed name (`<path>.tmp`) where only it and `path` may be written (a granted output file);
  // one left by a killed process is removed first.
  const tmp = opts.fixedTemp ? `${path}.tmp` : `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  if (opts.fixedTemp) await Deno.remove(tmp).catch(() => {});
  try {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await Deno.writeFile(tmp, bytes, { createNew: true, mode: PRIVATE_FILE_MODE });
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}
