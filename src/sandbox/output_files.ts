/**
 * The files a run left in its work directory, read by the agent (never by the
 * sandbox) with caps on how many and how large. Symbolic links and other
 * special files are never followed.
 *
 * @module
 */
import type { OutputFile, SandboxLimits } from "./types.ts";

/** Lists regular files under `workDir`, breadth first, stopping at the caps. */
export async function collectOutputFiles(
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
