/**
 * A small reader for the YAML-style front matter of agent and skill files:
 * `key: value` scalars (plain, quoted, numbers, booleans), inline lists
 * `[a, b]`, block lists (`- item` lines) and block text (`key: |`). Nothing
 * else of YAML is supported; anything else is an error naming the line.
 *
 * @module
 */

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
  const fields: Record<string, FrontValue> = {};
  for (let i = 1; i < end; i++) {
    const line = lines[i] as string;
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (!m) throw new SyntaxError(`${source}:${i + 1}: expected "key: value", got "${line}"`);
    const key = m[1] as string;
    const rest = (m[2] as string).trim();
    if (rest === "|" || rest === ">") {
      const block: string[] = [];
      while (i + 1 < end && (/^\s/.test(lines[i + 1] as string) || !lines[i + 1]?.trim())) {
        block.push(lines[++i] as string);
      }
      fields[key] = dedent(block).join(rest === "|" ? "\n" : " ").trim();
    } else if (rest === "") {
      const items: string[] = [];
      while (i + 1 < end && /^\s*-\s/.test(lines[i + 1] as string)) {
        items.push(unquote((lines[++i] as string).replace(/^\s*-\s/, "").trim()));
      }
      fields[key] = items;
    } else if (rest.startsWith("[")) {
      if (!rest.endsWith("]")) throw new SyntaxError(`${source}:${i + 1}: unclosed list`);
      const inner = rest.slice(1, -1).trim();
      fields[key] = inner ? splitList(inner).map((s) => unquote(s.trim())) : [];
    } else {
      fields[key] = scalar(rest);
    }
  }
  return { fields, body: lines.slice(end + 1).join("\n").trim() };
}

function dedent(lines: string[]): string[] {
  const indents = lines.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)?.[0].length ?? 0);
  const n = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(n));
}

/** Splits on commas outside quotes. */
function splitList(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote = "";
  for (const ch of s) {
    if (quote) {
      if (ch === quote) quote = "";
      cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      cur += ch;
    } else if (ch === ",") {
      out.push(cur);
      cur = "";
    } else {
      cur += ch;
    }
  }
  out.push(cur);
  return out;
}

function unquote(s: string): string {
  if (s.length >= 2 && (s[0] === '"' || s[0] === "'") && s.at(-1) === s[0]) {
    return s[0] === '"' ? JSON.parse(s) as string : s.slice(1, -1);
  }
  return s;
}

function scalar(s: string): FrontValue {
  if (s === "true") return true;
  if (s === "false") return false;
  if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
  return unquote(s);
}
