/**
 * Checks a received request against a turn's `Expect`.
 *
 * @module
 */

import {
  clip,
  lastWithRole,
  messageText,
  offeredToolNames,
  toolMessagesSinceAssistant,
} from "./scripted_llm_conversation.ts";
import type { ChatRequest, Expect } from "./scripted_llm_types.ts";

const list = (names: readonly string[]) => `[${names.join(", ")}]`;

/**
 * Returns one readable sentence per mismatch; an empty array when the request
 * meets every expectation.
 *
 * @example
 * ```ts
 * checkExpect({ lastRole: "tool" }, request); // ["expected the last message role \"tool\", got \"user\""]
 * ```
 */
export function checkExpect(expect: Expect, req: ChatRequest): string[] {
  const failures: string[] = [];
  const offered = offeredToolNames(req);

  if (expect.toolsOffered) {
    const want = [...new Set(expect.toolsOffered)].sort();
    const got = [...new Set(offered)].sort();
    if (want.join("\0") !== got.join("\0")) {
      failures.push(`expected tools offered ${list(want)}, got ${list(got)}`);
    }
  }
  const missing = (expect.toolsInclude ?? []).filter((name) => !offered.includes(name));
  if (missing.length > 0) {
    failures.push(`expected tools to include ${list(missing)}, offered ${list(offered)}`);
  }
  const unwanted = (expect.toolsExclude ?? []).filter((name) => offered.includes(name));
  if (unwanted.length > 0) failures.push(`expected tools to exclude ${list(unwanted)}`);

  if (expect.lastRole !== undefined) {
    const role = req.messages.at(-1)?.role ?? "(no messages)";
    if (role !== expect.lastRole) {
      failures.push(`expected the last message role "${expect.lastRole}", got "${role}"`);
    }
  }
  if (expect.userIncludes !== undefined) {
    const user = lastWithRole(req, "user");
    const text = user ? messageText(user) : "";
    if (!user || !text.includes(expect.userIncludes)) {
      failures.push(
        `expected the last user message to include ${JSON.stringify(expect.userIncludes)}, ` +
          `got ${user ? JSON.stringify(clip(text)) : "no user message"}`,
      );
    }
  }
  if (expect.toolResultIncludes) {
    const results = toolMessagesSinceAssistant(req).map(messageText);
    for (const needle of expect.toolResultIncludes) {
      if (!results.some((text) => text.includes(needle))) {
        failures.push(
          `expected a tool result since the last assistant message to include ` +
            `${JSON.stringify(needle)}, got ${JSON.stringify(results.map((r) => clip(r)))}`,
        );
      }
    }
  }
  if (expect.toolResultFor) failures.push(...checkToolResultFor(expect.toolResultFor, req));
  if (expect.systemIncludes !== undefined) {
    const system = req.messages
      .filter((message) => message.role === "system" || message.role === "developer")
      .map(messageText);
    if (!system.some((text) => text.includes(expect.systemIncludes ?? ""))) {
      failures.push(
        `expected a system message to include ${JSON.stringify(expect.systemIncludes)}`,
      );
    }
  }
  if (expect.model !== undefined && req.model !== expect.model) {
    failures.push(`expected model "${expect.model}", got "${req.model}"`);
  }
  if (expect.stream !== undefined && (req.stream === true) !== expect.stream) {
    failures.push(`expected stream: ${expect.stream}, got stream: ${req.stream ?? "unset"}`);
  }
  return failures;
}

function checkToolResultFor(
  want: NonNullable<Expect["toolResultFor"]>,
  req: ChatRequest,
): string[] {
  const tools = req.messages.filter((message) => message.role === "tool");
  const message = want.toolCallId === undefined
    ? tools.at(-1)
    : tools.findLast((m) => m.tool_call_id === want.toolCallId);
  const which = want.toolCallId === undefined
    ? "the latest tool result"
    : `tool result for ${JSON.stringify(want.toolCallId)}`;
  if (!message) return [`expected ${which}, found none`];
  const text = messageText(message);
  if (text.includes(want.includes)) return [];
  return [
    `expected ${which} to include ${JSON.stringify(want.includes)}, got ${
      JSON.stringify(clip(text))
    }`,
  ];
}
