/**
 * A conversation with the agent: the messages so far and what they cost.
 *
 * @module
 */
import { addUsage, type ChatMessage, type Usage, ZERO_USAGE } from "../llm/types.ts";

export class Session {
  readonly id: string;
  readonly startedAt: number;
  messages: ChatMessage[] = [];
  usage: Usage = { ...ZERO_USAGE };
  /** Usage of the latest model call: its prompt size is the context in use. */
  lastCallUsage: Usage = { ...ZERO_USAGE };
  turns = 0;
  /** Usage of the latest completed turn (all its model calls). */
  lastTurnUsage: Usage = { ...ZERO_USAGE };
  /** How often the conversation was compacted. */
  compactions = 0;

  constructor(id: string, startedAt: number) {
    this.id = id;
    this.startedAt = startedAt;
  }

  addUsage(u: Usage): void {
    this.usage = addUsage(this.usage, u);
    this.lastCallUsage = u;
  }

  /** Forgets the conversation but keeps the cost so far. */
  clear(): void {
    this.messages = [];
    this.lastCallUsage = { ...ZERO_USAGE };
  }

  /** The user's questions so far, oldest first. */
  userInputs(): string[] {
    return this.messages.flatMap((m) => (m.role === "user" ? [m.content] : []));
  }
}
