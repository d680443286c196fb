/**
 * The editor a logbook draft is edited in: `[elog] editor` (argv, no shell),
 * else `$VISUAL`, else `$EDITOR` (split on spaces), else `vi`. The launcher
 * grants exactly that program (`permissions.ts`): the configured one, or the
 * one its environment names; a compiled executable's baked grants hold only
 * the configured one.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";

/** The variables the editor may come from when the config names none. */
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
