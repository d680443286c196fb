/**
 * The records of a saved session file, as schemas: what `SessionStore`
 * writes, checked when it is read back, so a damaged or foreign file is
 * named in one line instead of resuming a conversation the model rejects.
 * Unknown fields are kept (a newer version's additions survive a resume).
 *
 * @module
 */
import { z } from "zod";
import type { ChatMessage, Usage } from "../llm/types.ts";
import type { RunInfo } from "./subagents/manager.ts";

const UsageSchema = z.looseObject({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
}) satisfies z.ZodType<Usage>;

const ToolCallSchema = z.looseObject({ id: z.string(), name: z.string(), arguments: z.string() });

const MessageSchema = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: z.string() }),
  z.looseObject({ role: z.literal("user"), content: z.string() }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.string(),
    toolCalls: z.array(ToolCallSchema).optional(),
  }),
  z.looseObject({
    role: z.literal("tool"),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
  }),
]) satisfies z.ZodType<ChatMessage>;

const RunInfoSchema = z.looseObject({
  id: z.string(),
  agent: z.string(),
  parentId: z.string(),
  level: z.number(),
  task: z.string(),
  background: z.boolean(),
  status: z.enum(["running", "done", "failed", "cancelled"]),
  model: z.string(),
  tools: z.array(z.string()),
  turns: z.number(),
  tokens: z.number(),
  usage: UsageSchema.optional(),
  result: z.unknown().optional(),
  error: z.string().optional(),
  startedAt: z.number(),
  endedAt: z.number().optional(),
}) satisfies z.ZodType<RunInfo>;

/** One line of a session file, as written. */
export type SessionRecord =
  | { t: "meta"; id: string; started_at: number; version: 1 }
  | { t: "message"; m: ChatMessage }
  | { t: "reset"; messages: ChatMessage[] }
  | { t: "usage"; usage: Usage; by_model?: Record<string, Usage> }
  | { t: "agent"; run: RunInfo };

/** One line of a session file, as checked when read back. */
export const SessionRecordSchema = z.discriminatedUnion("t", [
  z.looseObject({
    t: z.literal("meta"),
    id: z.string(),
    started_at: z.number(),
    version: z.literal(1),
  }),
  z.looseObject({ t: z.literal("message"), m: MessageSchema }),
  z.looseObject({ t: z.literal("reset"), messages: z.array(MessageSchema) }),
  z.looseObject({
    t: z.literal("usage"),
    usage: UsageSchema,
    by_model: z.record(z.string(), UsageSchema).optional(),
  }),
  z.looseObject({ t: z.literal("agent"), run: RunInfoSchema }),
]) satisfies z.ZodType<SessionRecord>;
