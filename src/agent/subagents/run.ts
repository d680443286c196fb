/**
 * One sub-agent run from start to end: its time-out, its share of the tree's
 * budget, its tools, and the {@link runTurn} loop it goes round until it
 * calls `return` or `fail`, runs out of turns, time or budget, or is
 * cancelled. The run's record is updated in place; the manager around it
 * keeps the records and tells the listeners.
 *
 * @module
 */
import { addUsage, type ModelClient, ZERO_USAGE } from "../../llm/types.ts";
import { runTurn } from "../loop.ts";
import { DATA_BLOCK_RULE } from "../outside_text.ts";
import { Session } from "../session.ts";
import type { AgentDefinition } from "./definition.ts";
import { budgetedModel, type Reservation } from "./budget.ts";
import type { RunInfo, RunStatus, SubagentManagerDeps } from "./types.ts";
import { errorMessage } from "../../util/errors.ts";
import { timeoutSignal } from "../../util/misc.ts";

/** A run about to start: its record (status "running"), definition, model and stop. */
export interface RunParts {
  info: RunInfo;
  def: AgentDefinition;
  model: ModelClient;
  /** Cancels the run (the operator, the parent, `replace`). */
  stop: AbortController;
  /** A foreground run's parent turn: the run ends with it. */
  parentSignal?: AbortSignal;
  /** The run's first model call, held against the tree's budget at spawn. */
  first?: Reservation;
}

const FINISH_NUDGE =
  "You have not finished. Call `return` with a result that matches the signature, or `fail` with the reason.";

/** Runs `parts.info` to its end, setting its status, result or error and its end time. */
export async function runSubagent(parts: RunParts, deps: SubagentManagerDeps): Promise<void> {
  const { info, def, model, stop } = parts;
  const finished = new AbortController();
  const overBudget = new AbortController();
  const timeout = timeoutSignal(def.timeoutMs, deps.timers);
  const signal = AbortSignal.any([
    stop.signal,
    overBudget.signal,
    timeout,
    ...(parts.parentSignal ? [parts.parentSignal] : []),
  ]);
  const end = (status: RunStatus, fields: Partial<RunInfo>) => {
    if (info.status !== "running") return;
    Object.assign(info, fields, { status, endedAt: deps.now() });
    finished.abort(new Error(`the agent ended: ${status}`));
  };
  /** The loop was cancelled: say by what. */
  const cancelled = (reason: string) => {
    if (overBudget.signal.aborted) end("failed", { error: reasonOf(overBudget.signal) });
    else if (timeout.aborted && !stop.signal.aborted) {
      end("failed", { error: `timed out after ${def.timeoutMs / 1000} s` });
    } else {
      end("cancelled", { error: stop.signal.aborted ? reasonOf(stop.signal) : reason });
    }
  };
  const tools = deps.buildTools({
    run: info,
    definition: def,
    model,
    finish: (result) => end("done", { result }),
    fail: (reason) => end("failed", { error: reason }),
  });
  const counted = budgetedModel(model, deps.budget, overBudget, (u) => {
    info.turns++;
    info.tokens += u.totalTokens;
    info.usage = addUsage(info.usage ?? ZERO_USAGE, u);
  }, parts.first);
  const session = new Session(info.id, info.startedAt);
  let input = info.task;
  try {
    while (info.status === "running") {
      const left = def.maxTurns - info.turns;
      if (left <= 0) {
        end("failed", { error: `used its ${def.maxTurns} turns without calling return` });
        break;
      }
      for await (
        const ev of runTurn({
          session,
          input,
          model: counted,
          tools,
          systemPrompt: systemPromptOf(def),
          maxIterations: left,
          signal: AbortSignal.any([signal, finished.signal]),
          hooks: deps.hooks,
          toolCalls: deps.toolCalls,
          keepFullResult: keepFor(info.id, deps.keepFullResult),
        })
      ) {
        if (info.status !== "running") break;
        if (ev.type === "cancelled") cancelled(ev.reason);
        else if (ev.type === "error" && info.turns < def.maxTurns) {
          // (At max_turns the loop's own error is replaced by the clearer one above.)
          end("failed", { error: ev.message });
        }
      }
      input = FINISH_NUDGE;
    }
  } catch (e) {
    end("failed", { error: `internal error: ${errorMessage(e)}` });
  } finally {
    // A run that ended before its first call gives that call back.
    parts.first?.settle();
  }
}

/** The definition's prompt and how to finish: `return` matching its signature, or `fail`. */
function systemPromptOf(def: AgentDefinition): string {
  return `${def.prompt}\n\nFinish by calling \`return\` with a result matching this ` +
    `JSON schema: ${
      JSON.stringify(def.signature)
    }; or call \`fail\` with the reason when the task ` +
    `cannot be done. Nobody reads your text answers, only what you return.\n\n${DATA_BLOCK_RULE}`;
}

function reasonOf(signal: AbortSignal): string {
  const r = signal.reason;
  return errorMessage(r ?? "cancelled");
}

/** A run's writer of whole results: its call ids prefixed by the run's, as the parent's may be the same. */
function keepFor(
  runId: string,
  keep: SubagentManagerDeps["keepFullResult"],
): SubagentManagerDeps["keepFullResult"] {
  return keep && ((callId, text) => keep(`${runId}-${callId}`, text));
}
