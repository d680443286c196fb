/**
 * Keeps a long session inside the model's context window. Past a threshold
 * (80% by default) it first trims large tool results of older turns, then,
 * if that is not enough, asks the model to summarise the older history. The
 * last few user messages and everything after them stay as they are, and
 * every plan decision (the `propose_plan` calls and their results) is kept
 * verbatim, whatever its age.
 *
 * @module
 */
import type { AgentEvent } from "./events.ts";
import type { Session } from "./session.ts";
import { type ChatMessage, type ModelClient, type ToolCall, ZERO_USAGE } from "../llm/types.ts";

export interface CompactionOptions {
  /** The model's context window in tokens. */
  contextWindow: number;
  /** Compact when the prompt passes this share of the window (0–1). */
  threshold: number;
  /** The last this-many user messages, and all after them, are never touched. */
  keepUserMessages: number;
  /** Older tool results longer than this (characters) are trimmed first. */
  trimChars: number;
  /** Tools whose calls and results are kept verbatim (plan decisions). */
  pinnedTools: readonly string[];
}

export const DEFAULT_COMPACTION: Omit<CompactionOptions, "contextWindow"> = {
  threshold: 0.8,
  keepUserMessages: 3,
  trimChars: 2_000,
  pinnedTools: ["propose_plan"],
};

/** The text that opens a summary message. */
export const SUMMARY_PREFIX = "[Summary of the earlier conversation, written by the assistant]";

const SUMMARY_PROMPT =
  "You compact the history of a conversation between an accelerator operator and their assistant. " +
  "Write a concise, factual summary in bullet points: what the operator asked, device names and the " +
  "values read (with units and times), conclusions reached, open questions, and any plans proposed " +
  "with their hashes and what became of them. Omit pleasantries. Output only the summary.";

/** A rough token count (about 4 characters a token, plus a little per message). */
export function estimateTokens(messages: readonly ChatMessage[], systemPrompt = ""): number {
  let chars = systemPrompt.length;
  for (const m of messages) {
    chars += m.content.length + 16;
    if (m.role === "assistant") {
      for (const c of m.toolCalls ?? []) chars += c.name.length + c.arguments.length + 16;
    }
  }
  return Math.ceil(chars / 4);
}

/**
 * Compacts the session when it needs it (or always, with `force`). Returns
 * the `compact` event, or undefined when nothing was done. A failed summary
 * call leaves the trimmed session as it is: the turn goes on.
 */
export async function compactSession(
  session: Session,
  model: ModelClient,
  systemPrompt: string,
  opts: CompactionOptions,
  signal: AbortSignal,
  force = false,
): Promise<Extract<AgentEvent, { type: "compact" }> | undefined> {
  const limit = opts.threshold * opts.contextWindow;
  // The endpoint's count of the last prompt, when larger, wins over the estimate;
  // later estimates are scaled by the same ratio (its tokenizer counts more).
  const estimated = estimateTokens(session.messages, systemPrompt);
  const before = Math.max(estimated, session.lastCallUsage.promptTokens);
  const scale = before / Math.max(1, estimated);
  const estimate = (m: readonly ChatMessage[]) =>
    Math.ceil(estimateTokens(m, systemPrompt) * scale);
  if (!force && before <= limit) return undefined;
  const split = tailStart(session.messages, opts.keepUserMessages);
  if (split === 0) return undefined;
  const pinned = new Set(opts.pinnedTools);
  const old = session.messages.slice(0, split);
  const tail = session.messages.slice(split);

  // First the cheap step: trim large results of older tool calls.
  const trimmed = old.map((m) =>
    m.role === "tool" && !pinned.has(m.name) && m.content.length > opts.trimChars
      ? { ...m, content: trimText(m.content, opts.trimChars) }
      : m
  );
  session.messages = [...trimmed, ...tail];
  session.lastCallUsage = { ...ZERO_USAGE };
  const afterTrim = estimate(session.messages);
  const trimmedOnly = afterTrim < before
    ? { type: "compact" as const, tokensBefore: before, tokensAfter: afterTrim }
    : undefined;
  if (!force && afterTrim <= limit) return trimmedOnly;
  // Only an earlier summary and pinned plans are old: summarising again gains nothing.
  const pinnedIds = new Set(
    pinnedPairs(trimmed, pinned).flatMap((m) => m.role === "tool" ? [m.toolCallId] : []),
  );
  const fresh = trimmed.filter((m) =>
    !(m.role === "user" && m.content.startsWith(SUMMARY_PREFIX)) &&
    !(m.role === "tool" && pinnedIds.has(m.toolCallId)) &&
    !(m.role === "assistant" && !m.content && m.toolCalls?.every((c) => pinnedIds.has(c.id)))
  );
  if (!fresh.length) return trimmedOnly;

  // Then summarise the older part, keeping plan calls and their results verbatim.
  let summary: string;
  try {
    summary = await summarise(model, trimmed, session, signal, opts.contextWindow * 2);
  } catch {
    if (signal.aborted) return undefined;
    return trimmedOnly;
  }
  session.messages = [
    { role: "user", content: `${SUMMARY_PREFIX}\n${summary}` },
    ...pinnedPairs(trimmed, pinned),
    ...tail,
  ];
  return {
    type: "compact",
    tokensBefore: before,
    tokensAfter: estimate(session.messages),
  };
}

/** Index of the first message kept as it is: the k-th last user message. */
function tailStart(messages: readonly ChatMessage[], k: number): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user" && !messages[i]?.content.startsWith(SUMMARY_PREFIX)) {
      if (++seen === k) return i;
    }
  }
  return 0;
}

/** Head and tail of a long text, saying how much was cut. */
function trimText(text: string, max: number): string {
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n…[${
    text.length - 2 * half
  } characters trimmed from this old tool result; call the tool again if needed]…\n${
    text.slice(-half)
  }`;
}

/** Each pinned call as an assistant message with that call alone, then its result. */
function pinnedPairs(messages: readonly ChatMessage[], pinned: ReadonlySet<string>): ChatMessage[] {
  const calls = new Map<string, ToolCall>();
  for (const m of messages) {
    if (m.role === "assistant") { for (const c of m.toolCalls ?? []) calls.set(c.id, c); }
  }
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== "tool" || !pinned.has(m.name)) continue;
    const call = calls.get(m.toolCallId);
    if (!call) continue;
    out.push({ role: "assistant", content: "", toolCalls: [call] }, m);
  }
  return out;
}

async function summarise(
  model: ModelClient,
  old: readonly ChatMessage[],
  session: Session,
  signal: AbortSignal,
  maxChars: number,
): Promise<string> {
  const transcript = old.map((m) => {
    switch (m.role) {
      case "tool":
        return `[${m.name} result] ${clip(m.content, 1_500)}`;
      case "assistant": {
        const calls = (m.toolCalls ?? []).map((c) => `${c.name}(${clip(c.arguments, 500)})`);
        return `assistant: ${m.content}${calls.length ? ` [calls: ${calls.join(", ")}]` : ""}`;
      }
      default:
        return `${m.role}: ${m.content}`;
    }
  }).join("\n");
  let text = "";
  for await (
    const ev of model.complete({
      messages: [
        { role: "system", content: SUMMARY_PROMPT },
        {
          role: "user",
          content: transcript.length > maxChars ? trimText(transcript, maxChars) : transcript,
        },
      ],
      tools: [],
    }, signal)
  ) {
    if (ev.type === "done") {
      // Counted in the session's cost, but it is not the conversation's prompt size.
      session.charge(ev.response.usage, model.name);
      text = ev.response.text;
    }
  }
  if (!text.trim()) throw new Error("the model returned an empty summary");
  return text.trim();
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
