/**
 * The YAML front matter of agent and skill files, read with `js-yaml` (core
 * schema: no dates, no custom tags). A field is text, a number, a boolean or
 * a list of text; anything else (a nested mapping, a list of mappings) is an
 * error naming the field, and a YAML syntax error names the file's line.
 *
 * @module
 */
import { CORE_SCHEMA, load, YAMLException } from "js-yaml";

/** A front-matter value: text, a number, a boolean, or a list of text. */
export type FrontValue = string | number | boolean | string[];

export interface FrontMatter {
  fields: Record<string, FrontValue>;
  /** The Markdown after the closing `---`. */
  body: string;
}

/**
 * Splits `---\nfront matter\n---\nbody`; throws SyntaxError naming the line
 * that cannot be read.
 *
 * @example
 * ```ts
 * const { fields, body } = parseFrontMatter("---\nname: x\ntools: [a, b]\n---\nPrompt");
 * // fields = { name: "x", tools: ["a", "b"] }, body = "Prompt"
 * ```
 */
export function parseFrontMatter(text: string, source: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") throw new SyntaxError(`${source}: must start with a --- line`);
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (end < 0) throw new SyntaxError(`${source}: the front matter has no closing --- line`);
  const doc = readYaml(lines.slice(1, end).join("\n"), source);
  if (doc === null || doc === undefined) return { fields: {}, body: bodyOf(lines, end) };
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new SyntaxError(`${source}:2: expected "key: value" lines, got ${describe(doc)}`);
  }
  const fields: Record<string, FrontValue> = {};
  for (const [key, value] of Object.entries(doc)) fields[key] = field(value, key, source);
  return { fields, body: bodyOf(lines, end) };
}

function bodyOf(lines: string[], end: number): string {
  return lines.slice(end + 1).join("\n").trim();
}

function readYaml(yaml: string, source: string): unknown {
  try {
    return load(yaml, { schema: CORE_SCHEMA });
  } catch (e) {
    if (!(e instanceof YAMLException)) throw e;
    // The front matter starts on the file's second line.
    const at = e.mark ? `:${e.mark.line + 2}:${e.mark.column + 1}` : "";
    throw new SyntaxError(`${source}${at}: ${e.reason}`);
  }
}

function field(value: unknown, key: string, source: string): FrontValue {
  if (value === null) return [];
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value) && value.every(isScalar)) {
    return value.map((v) => String(v).trim());
  }
  throw new SyntaxError(
    `${source}: "${key}" must be text, a number, true/false or a list of text, got ${
      describe(value)
    }`,
  );
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return "a list of mappings";
  if (typeof v === "object" && v !== null) return "a mapping";
  return `the ${typeof v} ${JSON.stringify(v)}`;
}
