/**
 * One tool call as the loop runs it: between the facility's hooks, and with
 * the whole text of a result cut for the model kept where the model is told.
 *
 * @module
 */
import type { AgentEvent } from "./events.ts";
import type { HookCall, ToolHooks } from "./hooks.ts";
import type { Session } from "./session.ts";
import type { CallScope, ToolOutcome, ToolSet } from "./tools.ts";
import type { ToolCall } from "../llm/types.ts";

/** What a call needs from the turn (see `TurnOptions`). */
export interface CallContext {
  tools: ToolSet;
  session: Session;
  hooks?: ToolHooks;
  keepFullResult?: (callId: string, text: string) => Promise<string>;
  /** The turn the calls belong to. */
  scope?: CallScope;
}

/** One call's end: what the model reads, and where its whole text went when it was cut. */
export interface Done {
  call: ToolCall;
  outcome: ToolOutcome;
  ms: number;
  fullOutput?: string | null;
}

export type RunCall = (
  call: ToolCall,
  signal: AbortSignal,
  emit: (ev: AgentEvent) => void,
) => Promise<Done>;

/**
 * Runs one call between its hooks: a `before_tool` veto answers the call
 * without running it; a cut result has its whole text kept and the model's
 * text says where.
 */
export function callRunner(opts: CallContext, now: () => number): RunCall {
  const { tools, hooks, session } = opts;
  return async (call, signal, emit) => {
    const started = now();
    const info: HookCall = {
      id: call.id,
      tool: call.name,
      args: tools.previewArgs(call.name, call.arguments),
      sessionId: session.id,
    };
    const veto = await hooks?.before(info, signal);
    if (veto) {
      emit(veto);
      const error = veto.message;
      const outcome = {
        ok: false,
        content: JSON.stringify({ error }),
        result: { error },
        args: info.args,
      };
      return { call, outcome, ms: now() - started };
    }
    let outcome = await tools.execute(call.name, call.arguments, signal, emit, opts.scope);
    let fullOutput: string | null | undefined;
    if (outcome.fullResult !== undefined) {
      const kept = await keepWhole(call.id, outcome.fullResult, opts.keepFullResult);
      fullOutput = kept.path;
      outcome = { ...outcome, content: `${outcome.content}\n${kept.note}` };
    }
    // Not cut short by cancellation: a facility's log hears of every call that ran.
    const after = { ...info, ok: outcome.ok, summary: outcome.content };
    for (const ev of await hooks?.after(after, new AbortController().signal) ?? []) {
      emit(ev);
    }
    return {
      call,
      outcome,
      ms: now() - started,
      ...(fullOutput !== undefined ? { fullOutput } : {}),
    };
  };
}

/** Saves a cut result's whole text; the note the model reads says where, or why not. */
async function keepWhole(
  callId: string,
  whole: unknown,
  keep: CallContext["keepFullResult"],
): Promise<{ path: string | null; note: string }> {
  const text = JSON.stringify(whole) ?? "null";
  const head = `[the result was cut for you; its whole text (${text.length} characters)`;
  if (!keep) {
    return { path: null, note: `${head} was not kept: this run has no session directory]` };
  }
  try {
    const path = await keep(callId, text);
    return { path, note: `${head} is in ${path}]` };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { path: null, note: `${head} could not be saved: ${why}]` };
  }
}
