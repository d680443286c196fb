/**
 * The TypeScript files of a folder of `src/`, for the architecture tests.
 *
 * @module
 */

/** The `src/` folder of this checkout. */
export const SRC = new URL("../../src/", import.meta.url);

/** Every .ts file under `dir` (a folder of `src/`, e.g. "plan/"), as paths relative to `src/`. */
export async function tsFiles(dir = ""): Promise<string[]> {
  const out: string[] = [];
  const walk = async (url: URL) => {
    for await (const e of Deno.readDir(url)) {
      const child = new URL(e.name + (e.isDirectory ? "/" : ""), url);
      if (e.isDirectory) await walk(child);
      else if (e.name.endsWith(".ts")) out.push(child.pathname.slice(SRC.pathname.length));
    }
  };
  await walk(new URL(dir, SRC));
  return out.sort();
}

/** Lines of a text, a final newline not counting as a line of its own. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}
