/**
 * The editor a logbook draft is edited in: `[elog] editor` (argv, no shell),
 * else `$VISUAL`, else `$EDITOR` (split on spaces), else `vi`. Under the
 * launcher's grants only `[elog] editor` runs: its program is the one added
 * to `--allow-run` (`permissions.ts`), and the environment is not read.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";

/** The variables the editor may come from when the config names none. */
const EDITOR_ENV = ["VISUAL", "EDITOR"] as const;

/** The editor's argv; the file to edit goes after it. */
export function editorCommand(
  config: Config,
  env: (name: string) => string | undefined,
): string[] {
  if (config.elog.editor.length) return [...config.elog.editor];
  for (const name of EDITOR_ENV) {
    const words = env(name)?.trim().split(/\s+/).filter(Boolean) ?? [];
    if (words.length) return words;
  }
  return ["vi"];
}
