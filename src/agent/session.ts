/**
 * A conversation with the agent: the messages so far and what they cost.
 *
 * @module
 */
import { addUsage, type ChatMessage, type Usage, ZERO_USAGE } from "../llm/types.ts";
import { SteerQueue } from "./steer.ts";

export class Session {
  readonly id: string;
  readonly startedAt: number;
  messages: ChatMessage[] = [];
  /**
   * Tokens of the conversation's model calls and its summaries, by the
   * configured name of the model that made them (the operator may switch
   * models mid-session, and each has its own prices).
   */
  usageByModel: Map<string, Usage> = new Map();
  /** Tokens whose model was not recorded (sessions saved before it was). */
  unattributedUsage: Usage = { ...ZERO_USAGE };
  /** Usage of the latest model call: its prompt size is the context in use. */
  lastCallUsage: Usage = { ...ZERO_USAGE };
  turns = 0;
  /** Usage of the latest completed turn (all its model calls). */
  lastTurnUsage: Usage = { ...ZERO_USAGE };
  /** How often the conversation was compacted. */
  compactions = 0;
  /** What the operator typed while a turn ran, for its next model call (see {@link steer}). */
  readonly steering: SteerQueue = new SteerQueue();

  constructor(id: string, startedAt: number) {
    this.id = id;
    this.startedAt = startedAt;
  }

  /**
   * Gives `text` to the model while a turn runs: it is added as a user
   * message (marked `steered`) at the start of the turn's next model call,
   * and a `steer_applied` event says so. Text still queued when the turn
   * ends stays in {@link steering}: take it with `steering.take()` and send
   * it as the next input.
   */
  steer(text: string): void {
    this.steering.push(text);
  }

  /** The session's tokens over every model. */
  get usage(): Usage {
    return [...this.usageByModel.values()].reduce(addUsage, this.unattributedUsage);
  }

  /** Counts a call of the conversation by `model` (configured name); its prompt is the context in use. */
  addUsage(u: Usage, model: string): void {
    this.charge(u, model);
    this.lastCallUsage = u;
  }

  /** Counts a call outside the conversation (a summary) in the cost only. */
  charge(u: Usage, model: string): void {
    this.usageByModel.set(model, addUsage(this.usageByModel.get(model) ?? ZERO_USAGE, u));
  }

  /**
   * Sets the usage read back from a saved session: the total, and the part
   * of it by model (absent in files saved before it was recorded; what the
   * models do not account for stays unattributed).
   */
  restoreUsage(total: Usage, byModel: Record<string, Usage> = {}): void {
    this.usageByModel = new Map(Object.entries(byModel));
    const attributed = [...this.usageByModel.values()].reduce(addUsage, ZERO_USAGE);
    this.unattributedUsage = {
      promptTokens: total.promptTokens - attributed.promptTokens,
      completionTokens: total.completionTokens - attributed.completionTokens,
      totalTokens: total.totalTokens - attributed.totalTokens,
    };
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
