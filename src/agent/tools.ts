/**
 * What the loop needs from tools, and nothing about what they do.
 *
 * @module
 */
import type { ToolSpec } from "../llm/types.ts";
import type { AgentEvent } from "./events.ts";

/** The outcome of one tool call. Failures are outcomes too, never exceptions. */
export interface ToolOutcome {
  ok: boolean;
  /** What the model reads: compact, truncated text (usually JSON). */
  content: string;
  /**
   * The structured result, for events and `--json`. When the model's text
   * was cut, this is a small stand-in with the same excerpt (see
   * `src/tools/full_output.ts`) and the whole is in `fullResult`.
   */
  result: unknown;
  /** The whole result when `result` is a cut-down stand-in (for the operator's own commands). */
  fullResult?: unknown;
  /** The arguments after validation and coercion, or the raw text when unparseable. */
  args: unknown;
}

export interface ToolSet {
  /** The tools offered to the model. */
  specs(): ToolSpec[];
  /** Whether a call only reads (read-only calls in one response run concurrently). */
  isReadOnly(name: string): boolean;
  /** Parses the model's raw JSON arguments as shown in events, without validating. */
  previewArgs(name: string, rawArgs: string): unknown;
  /**
   * Whether the loop must wait for a call to finish even after cancellation:
   * a tool that changes the machine handles the signal itself (it stops and
   * restores), and abandoning it would end the turn mid-restore.
   */
  awaitsCompletion(name: string): boolean;
  /**
   * Runs a call. Never throws: unknown tools, bad arguments and failures
   * become outcomes. `emit` passes events of the call (plan progress…) out.
   */
  execute(
    name: string,
    rawArgs: string,
    signal: AbortSignal,
    emit?: (ev: AgentEvent) => void,
    scope?: CallScope,
  ): Promise<ToolOutcome>;
}

/** Where a call was made, for tools that limit themselves per turn (`launch_display`). */
export interface CallScope {
  /** Unique to the turn (the session's id and its turn number). */
  turn: string;
}
