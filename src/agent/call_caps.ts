/**
 * Caps on the tool calls a model may have run: per message and per turn. A
 * model's one message can ask for thousands of calls; only the first ones
 * within both caps run, and every other call is answered with a result that
 * says why it did not run, so the conversation stays valid and the model can
 * read it. The loop tells the outside world with one event per cap that
 * refused calls, not one per call.
 *
 * A message's refused calls beyond the first {@link LISTED_REFUSALS} of each
 * cap are left out of the conversation (the message as kept lists the calls
 * it has results for), so a message of thousands of calls does not make
 * every later request of the session thousands of results longer; the
 * results the model reads say how many were left out.
 *
 * @module
 */
import type { ToolCall } from "../llm/types.ts";

/** The caps; `keys` name the settings in messages. */
export interface CallCaps {
  perMessage: number;
  perTurn: number;
  keys?: { perMessage: string; perTurn: string };
}

const DEFAULT_KEYS = {
  perMessage: "[agent] max_tool_calls_per_message",
  perTurn: "[agent] max_tool_calls_per_turn",
};

/** Refused calls of one cap kept in the conversation, with their results. */
export const LISTED_REFUSALS = 20;

/** Calls of one message that a cap refused, and what the model and the operator read. */
export interface Refusal {
  cap: "per_message" | "per_turn";
  limit: number;
  key: string;
  /** Every call refused. */
  calls: ToolCall[];
  /** The first of them, kept in the conversation with `result`; the rest are left out. */
  listed: ToolCall[];
  /** The tool result of each refused call. */
  result: string;
  /** One line for the operator. */
  message: string;
}

/** Which calls of one message run, given how many the turn has run already. */
export function admitCalls(
  calls: ToolCall[],
  caps: CallCaps,
  ranThisTurn: number,
): { run: ToolCall[]; refused: Refusal[] } {
  const keys = caps.keys ?? DEFAULT_KEYS;
  const refused: Refusal[] = [];
  const inMessage = calls.slice(0, caps.perMessage);
  const overMessage = calls.slice(caps.perMessage);
  if (overMessage.length > 0) {
    refused.push({
      cap: "per_message",
      limit: caps.perMessage,
      key: keys.perMessage,
      calls: overMessage,
      listed: overMessage.slice(0, LISTED_REFUSALS),
      result: `not run: the message asked for ${calls.length} tool calls and at most ` +
        `${caps.perMessage} of one message are run (${keys.perMessage})${
          leftOut(overMessage.length)
        }; ask again for what is still needed, in fewer calls (get_parameter reads many ` +
        "devices in one call)",
      message: `${overMessage.length} of the model's ${calls.length} tool calls in one message ` +
        `were not run: at most ${caps.perMessage} run per message (${keys.perMessage})`,
    });
  }
  const room = Math.max(0, caps.perTurn - ranThisTurn);
  const run = inMessage.slice(0, room);
  const overTurn = inMessage.slice(room);
  if (overTurn.length > 0) {
    refused.push({
      cap: "per_turn",
      limit: caps.perTurn,
      key: keys.perTurn,
      calls: overTurn,
      listed: overTurn.slice(0, LISTED_REFUSALS),
      result: `not run: this turn has run its ${caps.perTurn} tool calls (${keys.perTurn})${
        leftOut(overTurn.length)
      }; answer with what you have and say what is still missing`,
      message: `${overTurn.length} tool calls were not run: the turn had run its ` +
        `${caps.perTurn} (${keys.perTurn})`,
    });
  }
  return { run, refused };
}

/** The note on refused calls left out of the conversation, if any were. */
function leftOut(refused: number): string {
  const out = refused - LISTED_REFUSALS;
  return out > 0
    ? `; ${refused} calls were refused, ${out} of them are left out of this conversation`
    : "";
}
