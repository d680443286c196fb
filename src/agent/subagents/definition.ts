/**
 * Sub-agents as data: a Markdown file with front matter (name, description,
 * tools, deny, model, max_turns, timeout, output) and the agent's prompt as
 * its body; and the tools a run of one gets, narrowed by its spawn. Pure:
 * the CLI reads the files.
 *
 * @module
 */
import { type FrontValue, parseFrontMatter } from "./frontmatter.ts";
import { type JsonSchema, parseSignature } from "./signature.ts";
import { errorMessage } from "../../util/errors.ts";

/**
 * Tools no sub-agent may ever hold, whatever its file or its spawner says:
 * the path to a change. (Tools that are not read-only are refused as well,
 * where the tool set is built.)
 */
export const FORBIDDEN_TOOLS: ReadonlySet<string> = new Set(["propose_plan"]);

/** Tools the sub-agent machinery adds itself; a definition cannot list them. */
export const AGENT_TOOLS: ReadonlySet<string> = new Set([
  "spawn_subagent",
  "agent_status",
  "agent_list",
  "agent_cancel",
  "return",
  "fail",
]);

/** A sub-agent definition as read from `configs/agents/NAME.md`. */
export interface AgentDefinition {
  name: string;
  description: string;
  /** Allow list of tool names. */
  tools: string[];
  /** Deny list, applied after the allow list. */
  deny: string[];
  /** A named model from `[llm.models]`; else the one bound at spawn, else the parent's. */
  model?: string;
  /** Model calls allowed (each correction of an invalid result costs one). */
  maxTurns: number;
  timeoutMs: number;
  /** What `return` must be given. */
  signature: JsonSchema;
  /** The system prompt of the agent. */
  prompt: string;
  source: string;
}

/** Parses one definition; throws SyntaxError naming the file and the field. */
export function parseAgentDefinition(text: string, source: string): AgentDefinition {
  const { fields, body } = parseFrontMatter(text, source);
  const str = (k: string, required = true): string | undefined => {
    const v = fields[k];
    if (v === undefined && !required) return undefined;
    if (typeof v !== "string" || !v.trim()) {
      throw new SyntaxError(`${source}: "${k}" must be a non-empty text`);
    }
    return v.trim();
  };
  const list = (k: string): string[] => {
    const v = fields[k];
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new SyntaxError(`${source}: "${k}" must be a list`);
    return v;
  };
  const name = str("name") as string;
  if (!/^[a-z][a-z0-9_-]*$/.test(name)) {
    throw new SyntaxError(`${source}: name "${name}" must be lower case letters, digits, _ or -`);
  }
  const tools = list("tools");
  if (!tools.length) throw new SyntaxError(`${source}: "tools" must list at least one tool`);
  for (const t of tools) {
    if (FORBIDDEN_TOOLS.has(t)) {
      throw new SyntaxError(`${source}: ${t} can never be given to a sub-agent`);
    }
    if (AGENT_TOOLS.has(t)) {
      throw new SyntaxError(`${source}: ${t} is added by level, not listed in "tools"`);
    }
  }
  const output = str("output") as string;
  let signature: JsonSchema;
  try {
    signature = parseSignature(output);
  } catch (e) {
    throw new SyntaxError(`${source}: output: ${errorMessage(e)}`);
  }
  if (!body) throw new SyntaxError(`${source}: the prompt (the text after ---) is empty`);
  return {
    name,
    description: str("description") as string,
    tools,
    deny: list("deny"),
    model: str("model", false),
    maxTurns: positive(fields.max_turns, 8, `${source}: max_turns`),
    timeoutMs: seconds(fields.timeout, 120, `${source}: timeout`) * 1000,
    signature,
    prompt: body,
    source,
  };
}

function positive(v: FrontValue | undefined, dflt: number, what: string): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new SyntaxError(`${what} must be a whole number of at least 1`);
  }
  return v;
}

/** `90`, `"90s"`, `"2m"`. */
/** The longest sub-agent timeout: one day, far inside what a timer holds. */
const MAX_TIMEOUT_S = 86_400;

function seconds(v: FrontValue | undefined, dflt: number, what: string): number {
  if (v === undefined) return dflt;
  const m = typeof v === "string" ? /^(\d+(?:\.\d+)?)\s*(s|m)$/.exec(v.trim()) : null;
  const s = typeof v === "number" && v > 0 ? v : m ? Number(m[1]) * (m[2] === "m" ? 60 : 1) : NaN;
  if (Number.isNaN(s)) throw new SyntaxError(`${what} must be seconds, e.g. 90, "90s" or "2m"`);
  if (!(s <= MAX_TIMEOUT_S)) {
    throw new SyntaxError(`${what}: ${s} s is above the bound of ${MAX_TIMEOUT_S} s (one day)`);
  }
  return s;
}

/**
 * The tools of a run: the definition's allow list, narrowed by the spawn's
 * allow list, minus both deny lists and every forbidden tool. A spawn that
 * names a tool outside the definition is refused: spawning never widens.
 */
export function narrowTools(def: AgentDefinition, allow?: string[], deny?: string[]): string[] {
  if (allow) {
    const wider = allow.filter((t) => !def.tools.includes(t));
    if (wider.length) {
      throw new RangeError(
        `allow_tools may only narrow ${def.name}'s tools (${def.tools.join(", ")}); not allowed: ${
          wider.join(", ")
        }`,
      );
    }
  }
  const denied = new Set([...def.deny, ...(deny ?? []), ...FORBIDDEN_TOOLS]);
  return (allow ?? def.tools).filter((t) => !denied.has(t));
}
