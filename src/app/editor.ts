/**
 * The editor a logbook draft is edited in: `[elog] editor` (argv, no shell),
 * else `$VISUAL`, else `$EDITOR` (split on spaces), else `vi`. The grants
 * allow running exactly its program (`permissions.ts`).
 *
 * @module
 */
import type { Config } from "../config/schema.ts";

/** The variables the editor may come from (granted to be read). */
export const EDITOR_ENV = ["VISUAL", "EDITOR"] as const;

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
