/**
 * Between our model types and the OpenAI wire format: a request's body
 * (messages, tools, temperature), a whole completion read back as a
 * {@link ModelResponse}, and token usage, reported or estimated.
 *
 * @module
 */
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { LlmError } from "./errors.ts";
import type { ChatMessage, ModelRequest, ModelResponse, ToolCall, Usage } from "./types.ts";

/** The body of a chat-completion request, without `stream`. */
export function requestBody(model: string, request: ModelRequest, temperature?: number) {
  const tools: ChatCompletionTool[] = request.tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
  return {
    model,
    messages: request.messages.map(toOpenAiMessage),
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.temperature ?? temperature) !== undefined
      ? { temperature: request.temperature ?? temperature }
      : {},
  };
}

/** A non-streamed completion as our response; `model` when the endpoint names none. */
export function fromCompletion(
  completion: ChatCompletion,
  request: ModelRequest,
  model: string,
): ModelResponse {
  const choice = completion.choices[0];
  if (!choice?.message) {
    throw new LlmError("stream", "model endpoint answered a completion without a message");
  }
  const message = choice.message;
  const toolCalls: ToolCall[] = [];
  for (const call of message?.tool_calls ?? []) {
    if (call.type === "function") {
      toolCalls.push({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      });
    }
  }
  const text = message?.content ?? "";
  return {
    text,
    toolCalls,
    usage: (completion.usage && toUsage(completion.usage)) ??
      estimateUsage(request, text, toolCalls),
    finishReason: choice.finish_reason ?? "stop",
    model: completion.model || model,
  };
}

function toOpenAiMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case "system":
    case "user":
      return { role: m.role, content: m.content };
    case "assistant":
      return m.toolCalls && m.toolCalls.length > 0
        ? {
          role: "assistant",
          content: m.content || null,
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
        : { role: "assistant", content: m.content };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  }
}

/**
 * The endpoint's usage report in our terms; undefined when its counts are
 * not whole numbers of tokens (then the caller estimates). The counts feed
 * the sub-agents' token budget and compaction: a negative or text count
 * from a hostile endpoint made the tree's budget a string no limit was ever
 * reached by.
 */
export function toUsage(
  u: { prompt_tokens: unknown; completion_tokens: unknown; total_tokens?: unknown },
): Usage | undefined {
  const prompt = tokens(u.prompt_tokens);
  const completion = tokens(u.completion_tokens);
  if (prompt === undefined || completion === undefined) return undefined;
  // A total above the sum is kept (it may count more); one below it or not a count is not.
  const total = Math.max(prompt + completion, tokens(u.total_tokens) ?? 0);
  return { promptTokens: prompt, completionTokens: completion, totalTokens: total };
}

/** A count of tokens as an endpoint should report it: a whole number, not negative, not absurd. */
function tokens(v: unknown): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && v <= MAX_TOKENS
    ? v
    : undefined;
}

/** More tokens than any model's window holds in one call, by far. */
const MAX_TOKENS = 1e9;

/** About four characters a token, for endpoints that report no usage. */
export function estimateUsage(request: ModelRequest, text: string, calls: ToolCall[]): Usage {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  for (const t of request.tools) {
    chars += JSON.stringify(t.parameters).length + t.description.length;
  }
  const out = text.length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const promptTokens = Math.ceil(chars / 4);
  const completionTokens = Math.ceil(out / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}
