/**
 * What the loop needs from tools, and nothing about what they do.
 *
 * @module
 */
import type { ToolSpec } from "../llm/types.ts";

/** The outcome of one tool call. Failures are outcomes too, never exceptions. */
export interface ToolOutcome {
  ok: boolean;
  /** What the model reads: compact, truncated text (usually JSON). */
  content: string;
  /** The structured result, for events and `--json`. */
  result: unknown;
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
  /** Runs a call. Never throws: unknown tools, bad arguments and failures become outcomes. */
  execute(name: string, rawArgs: string, signal: AbortSignal): Promise<ToolOutcome>;
}
