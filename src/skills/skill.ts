/**
 * Skills: workflows written for operators' recurring tasks
 * (`configs/skills/NAME/SKILL.md`: front matter with name, description and
 * trigger regexes, then the workflow). When the operator's input matches a
 * trigger, the skill's workflow goes into the system prompt. Pure: the CLI
 * reads the files.
 *
 * @module
 */
import { parseFrontMatter } from "../agent/subagents/frontmatter.ts";
import { errorMessage } from "../util/errors.ts";

export interface Skill {
  name: string;
  description: string;
  /** Case-insensitive; any one matching the operator's input activates the skill. */
  triggers: RegExp[];
  /** The workflow, as Markdown. */
  body: string;
  source: string;
}

/** Parses one SKILL.md; throws SyntaxError naming the file and what is wrong. */
export function parseSkill(text: string, source: string): Skill {
  const { fields, body } = parseFrontMatter(text, source);
  const { name, description, triggers } = fields;
  if (typeof name !== "string" || !/^[a-z][a-z0-9_-]*$/.test(name)) {
    throw new SyntaxError(`${source}: "name" must be lower case letters, digits, _ or -`);
  }
  if (typeof description !== "string" || !description.trim()) {
    throw new SyntaxError(`${source}: "description" must be a non-empty text`);
  }
  if (!Array.isArray(triggers) || !triggers.length) {
    throw new SyntaxError(`${source}: "triggers" must list at least one regular expression`);
  }
  const compiled = triggers.map((t) => {
    try {
      return new RegExp(t, "i");
    } catch (e) {
      throw new SyntaxError(`${source}: trigger /${t}/: ${errorMessage(e)}`);
    }
  });
  if (!body) throw new SyntaxError(`${source}: the workflow (the text after ---) is empty`);
  return { name, description: description.trim(), triggers: compiled, body, source };
}

/** The skills whose triggers match any of the inputs, in the order given. */
export function matchSkills(skills: readonly Skill[], inputs: readonly string[]): Skill[] {
  return skills.filter((s) => inputs.some((i) => s.triggers.some((t) => t.test(i))));
}

/** The system-prompt section of the active skills; empty when none is active. */
export function skillsSection(active: readonly Skill[]): string {
  return active.map((s) =>
    `# Skill: ${s.name} (${s.description})\n\nThe operator's request matches this workflow; follow it ` +
    `unless they ask otherwise.\n\n${s.body.trim()}`
  ).join("\n\n");
}
