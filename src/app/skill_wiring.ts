/**
 * Loads skills: the built-in ones beside the program (`configs/skills/`),
 * then `[skills] dir`, which may add or replace by name.
 *
 * @module
 */
import { parseSkill, type Skill } from "../skills/skill.ts";
import { CliError, Exit } from "./exit.ts";
import { errorMessage } from "../util/errors.ts";
import { isRefusal, MAX_DEFINITION_BYTES, readRegularText } from "../util/bounded_read.ts";

export const BUILTIN_SKILLS_URL = new URL("../../configs/skills/", import.meta.url);

/** Reads `DIR/NAME/SKILL.md` of every directory in order; a bad file is a usage error (exit 2). */
export async function loadSkills(dirs: string[]): Promise<Skill[]> {
  const byName = new Map<string, Skill>();
  for (const dir of dirs) {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(dir)) if (e.isDirectory) names.push(e.name);
    } catch (e) {
      throw new CliError(`skills dir ${dir}: cannot read it (${errorMessage(e)})`, Exit.USAGE);
    }
    for (const n of names.sort()) {
      const path = `${dir.replace(/\/$/, "")}/${n}/SKILL.md`;
      let text: string;
      try {
        text = await readRegularText(path, MAX_DEFINITION_BYTES, {
          fix: "a skill is a directory with a SKILL.md file",
        });
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue;
        if (isRefusal(e)) throw new CliError(`skill ${e.message}`, Exit.USAGE);
        throw e;
      }
      try {
        const skill = parseSkill(text, path);
        byName.set(skill.name, skill);
      } catch (e) {
        if (e instanceof SyntaxError) throw new CliError(`skill ${e.message}`, Exit.USAGE);
        throw e;
      }
    }
  }
  return [...byName.values()];
}
