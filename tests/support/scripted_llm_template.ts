/**
 * `{{…}}` templates in scripted text and tool arguments, filled from the request:
 *
 * - `{{last_user}}`: the text of the last user message;
 * - `{{last_tool_result}}`: the content of the most recent tool message;
 * - `{{last_tool_result.a.b[0].c}}`: that content parsed as JSON (inside its data
 *   block, when the agent marked it as text from outside), then the path;
 *   strings and numbers are inserted as they are, anything else as JSON.
 *
 * @module
 */

import { dataBlockBody } from "./data_block.ts";
import { lastWithRole, messageText } from "./scripted_llm_conversation.ts";
import type { ChatRequest } from "./scripted_llm_types.ts";

/** Text after rendering, with the expressions that could not be resolved. */
export interface Rendered {
  text: string;
  unresolved: string[];
}

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const SEGMENT = /\.([^.[\]]+)|\[(\d+)\]/y;

/**
 * Renders every template in `text`. An unresolvable one becomes
 * `<unresolved: expr>` and is listed in `unresolved`.
 *
 * @example
 * ```ts
 * renderTemplate("PV is {{last_tool_result.value}}", request).text; // "PV is 4.2"
 * ```
 */
export function renderTemplate(text: string, req: ChatRequest): Rendered {
  const unresolved: string[] = [];
  if (!text.includes("{{")) return { text, unresolved };
  const rendered = text.replace(TEMPLATE, (_match, expr: string) => {
    const value = resolve(expr, req);
    if (value === undefined) {
      unresolved.push(expr);
      return `<unresolved: ${expr}>`;
    }
    return value;
  });
  return { text: rendered, unresolved };
}

function resolve(expr: string, req: ChatRequest): string | undefined {
  if (expr === "last_user") {
    const user = lastWithRole(req, "user");
    return user ? messageText(user) : undefined;
  }
  if (!expr.startsWith("last_tool_result")) return undefined;
  const tool = lastWithRole(req, "tool");
  if (!tool) return undefined;
  const content = messageText(tool);
  const path = parsePath(expr.slice("last_tool_result".length));
  if (path === undefined) return undefined;
  if (path.length === 0) return content;

  let value: unknown;
  try {
    value = JSON.parse(dataBlockBody(content));
  } catch {
    return undefined;
  }
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    if (Array.isArray(value) !== (typeof key === "number")) return undefined;
    if (!Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return JSON.stringify(value);
}

/** `.a.b[0]` → `["a", "b", 0]`; `undefined` when malformed. */
function parsePath(rest: string): (string | number)[] | undefined {
  const keys: (string | number)[] = [];
  SEGMENT.lastIndex = 0;
  while (SEGMENT.lastIndex < rest.length) {
    const at = SEGMENT.lastIndex;
    const match = SEGMENT.exec(rest);
    if (!match || match.index !== at) return undefined;
    keys.push(match[1] ?? Number(match[2]));
  }
  return keys;
}
