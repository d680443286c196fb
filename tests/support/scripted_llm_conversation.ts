/**
 * Reading a received chat request: message text, the latest tool result, the tools
 * offered. Shared by expectations and templates.
 *
 * @module
 */

import type { ChatMessage, ChatRequest } from "./scripted_llm_types.ts";

/** The text of a message: its string content, or its text parts joined. */
export function messageText(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => typeof part.text === "string" ? part.text : "").join("");
}

/** The most recent message with `role`, if any. */
export function lastWithRole(req: ChatRequest, role: string): ChatMessage | undefined {
  return req.messages.findLast((message) => message.role === role);
}

/** Tool messages sent after the last assistant message. */
export function toolMessagesSinceAssistant(req: ChatRequest): ChatMessage[] {
  const lastAssistant = req.messages.findLastIndex((message) => message.role === "assistant");
  return req.messages.slice(lastAssistant + 1).filter((message) => message.role === "tool");
}

/** Names of the functions offered in `tools`, in request order. */
export function offeredToolNames(req: ChatRequest): string[] {
  return (req.tools ?? []).flatMap((tool) =>
    typeof tool.function?.name === "string" ? [tool.function.name] : []
  );
}

/** Shortens text for failure messages. */
export function clip(text: string, max = 160): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;
}

/**
 * Checks the shape the server relies on and returns the body typed, or a reason
 * why it is not a chat-completions request.
 */
export function asChatRequest(body: unknown): ChatRequest | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return "body is not a JSON object";
  }
  const record = body as Record<string, unknown>;
  if (typeof record.model !== "string") return "`model` is not a string";
  if (!Array.isArray(record.messages)) return "`messages` is not an array";
  const messages: unknown[] = record.messages;
  for (const [i, message] of messages.entries()) {
    if (typeof message !== "object" || message === null) return `messages[${i}] is not an object`;
    const { role, content } = message as Record<string, unknown>;
    if (typeof role !== "string") return `messages[${i}] has no string \`role\``;
    if (content !== undefined && content !== null && typeof content !== "string") {
      if (!Array.isArray(content)) return `messages[${i}].content is neither string nor array`;
      const parts: unknown[] = content;
      if (parts.some((part) => typeof part !== "object" || part === null)) {
        return `messages[${i}].content has a part that is not an object`;
      }
    }
  }
  if (record.tools !== undefined && record.tools !== null && !Array.isArray(record.tools)) {
    return "`tools` is not an array";
  }
  return record as ChatRequest;
}
