/**
 * The files a run left in its work directory, read by the agent (never by the
 * sandbox) with caps on how many and how large. Symbolic links and other
 * special files are never followed.
 *
 * @module
 */
import type { OutputFile, SandboxLimits } from "./types.ts";
import { asError } from "../util/errors.ts";

/** Mode bits a returned file never keeps: setuid, setgid, sticky, group- and world-writable. */
const UNSAFE_MODE = 0o7022;

/**
 * Lists regular files under `workDir`, breadth first, stopping at the caps;
 * strips {@link UNSAFE_MODE} bits from what it returns. Fails closed: a
 * directory that cannot be listed is an error (the run's result says so),
 * never an exception out of here.
 */
export async function collectOutputFiles(
  workDir: string,
  limits: Pick<SandboxLimits, "maxFiles" | "maxFileBytes">,
): Promise<{ files: OutputFile[]; omitted: number } | { error: string }> {
  try {
    return await collect(workDir, limits);
  } catch (e) {
    return { error: `the run's files could not be collected (${asError(e).name})` };
  }
}

async function collect(
  workDir: string,
  limits: Pick<SandboxLimits, "maxFiles" | "maxFileBytes">,
): Promise<{ files: OutputFile[]; omitted: number }> {
  const files: OutputFile[] = [];
  let omitted = 0;
  // Counting stops here: a million files must not cost a million stats.
  const countCap = limits.maxFiles + 10_000;
  const dirs = [""];
  while (dirs.length && files.length + omitted < countCap) {
    const rel = dirs.shift() as string;
    for await (const e of Deno.readDir(rel ? `${workDir}/${rel}` : workDir)) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory) dirs.push(name);
      if (!e.isFile) continue; // symlinks included: never followed
      if (files.length >= limits.maxFiles) {
        if (++omitted + files.length >= countCap) break;
        continue;
      }
      const path = `${workDir}/${name}`;
      const info = await Deno.lstat(path);
      if (info.mode !== null && info.mode & UNSAFE_MODE) {
        await Deno.chmod(path, info.mode & 0o777 & ~UNSAFE_MODE);
      }
      files.push({
        name,
        bytes: info.size,
        path,
        ...(info.size > limits.maxFileBytes
          ? { note: `larger than the ${limits.maxFileBytes}-byte limit; not returned` }
          : {}),
      });
    }
  }
  files.sort((a, b) => a.name.localeCompare(b.name));
  return { files, omitted };
}
