/**
 * The stable JSON result of `ask --json` (and the last line of
 * `--stream-json`), built from the turn's events. Documented in README.md;
 * change it only with a new `schema` version.
 *
 * @module
 */
import { type AgentEvent, assertNever } from "../../agent/events.ts";
import { cutResult, resultOf } from "../../tools/results.ts";
import { Exit, type ExitCode } from "../../app/exit.ts";
import type { TruncatedResult } from "../../tools/full_output.ts";
import type { DraftJson } from "../../elog/mod.ts";

export const ASK_SCHEMA = "accel-agent.ask/1";

export interface AskToolCall {
  id: string;
  name: string;
  args: unknown;
  ok: boolean;
  result: unknown;
  ms: number;
}

export interface AskResult {
  schema: typeof ASK_SCHEMA;
  ok: boolean;
  answer: string;
  /** The model id that answered (as the endpoint reported), else the configured one. */
  model: string;
  /** The configured name of the model (`[llm.models]`). */
  model_name: string;
  tool_calls: AskToolCall[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  duration_ms: number;
  cancelled: boolean;
  /** `kind` when known: "too_large", "turn_deadline", "timeout"… (see README, Failures). */
  error: { message: string; retryable: boolean; kind?: string } | null;
  /** Plans proposed in the turn and what became of them. */
  plans: AskPlan[];
  /** Facility hooks that vetoed a call or failed (`hook` events), in order. */
  hooks: AskHook[];
  /** Tool calls a cap did not let run (`tool_calls_refused` events), in order. */
  tool_calls_refused: AskRefused[];
  /** False when a plan ran but the audit could not record its outcome (exit code 1). */
  recorded: boolean;
  /**
   * The logbook drafts of the plans that ran in the turn (never posted here:
   * `accel-agent elog post ID` posts one).
   */
  elog_drafts: DraftJson[];
  /** False when the session could not be saved (a full disk): `session_error` says why (exit code 1). */
  session_saved: boolean;
  session_error?: string;
  exit_code: ExitCode;
}

export interface AskPlan {
  plan_hash: string;
  decision: "approved" | "rejected" | "partial" | "deferred";
  reason?: string;
  /** Deferred: where the plan was saved. */
  saved_path?: string;
  /** Deferred: the saved plan's ID; the operator reviews it with `plan show ID`. */
  plan_id?: string;
}

/** A hook that vetoed a tool call or failed. */
export interface AskHook {
  stage: "before_tool" | "after_tool";
  hook: string;
  call_id: string;
  tool: string;
  outcome: "vetoed" | "failed";
  message: string;
}

/** Tool calls of one message that a cap did not let run. */
export interface AskRefused {
  cap: "per_message" | "per_turn";
  count: number;
  limit: number;
  key: string;
  message: string;
}

/** Folds events into the result as they come. */
export class AskResultBuilder {
  /** Text of the turn's ended messages, and of the message streaming now. */
  #answer = "";
  #streaming = "";
  #calls = new Map<string, AskToolCall>();
  #model: string;
  #usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  #cancelled = false;
  #error: AskResult["error"] = null;
  #complete = false;
  #plans: AskPlan[] = [];
  #hooks: AskHook[] = [];
  #refused: AskRefused[] = [];
  #recorded = true;
  #unsaved: string | undefined;
  #drafts: DraftJson[] = [];

  constructor(readonly modelName: string, model: string, readonly startedMs: number) {
    this.#model = model;
  }

  add(ev: AgentEvent): void {
    switch (ev.type) {
      case "text":
        this.#streaming += ev.delta;
        break;
      case "message_end":
        this.#answer += this.#streaming;
        this.#streaming = "";
        break;
      case "retry":
        // Text of a failed attempt is void (not that of messages before it); the retry streams it again.
        if (ev.discardedText) this.#streaming = "";
        break;
      case "tool_start":
        this.#calls.set(ev.id, {
          id: ev.id,
          name: ev.name,
          args: ev.args,
          ok: false,
          result: null,
          ms: 0,
        });
        break;
      case "tool_end": {
        const call = this.#calls.get(ev.id);
        if (call) {
          Object.assign(call, {
            ok: ev.ok,
            result: withFullOutput(ev.result, ev.fullOutput),
            ms: ev.ms,
          });
        }
        // A plan's result says when its outcome is not in the audit.
        const plan = resultOf("propose_plan", ev) ?? cutResult(ev);
        if (plan && "recorded" in plan && plan.recorded === false) {
          this.#recorded = false;
        }
        break;
      }
      case "turn_complete":
        this.#complete = true;
        this.#model = ev.model || this.#model;
        this.#usage = {
          prompt_tokens: ev.usage.promptTokens,
          completion_tokens: ev.usage.completionTokens,
          total_tokens: ev.usage.totalTokens,
        };
        break;
      case "cancelled":
        this.#cancelled = true;
        break;
      case "error":
        this.#error = {
          message: ev.message,
          retryable: ev.retryable,
          ...(ev.kind ? { kind: ev.kind } : {}),
        };
        break;
      case "plan_proposed":
      case "plan_progress":
      case "compact":
      case "subagent":
      case "turn_start":
      case "steer_applied":
        break;
      case "hook":
        this.#hooks.push({
          stage: ev.stage,
          hook: ev.hook,
          call_id: ev.id,
          tool: ev.tool,
          outcome: ev.outcome,
          message: ev.message,
        });
        break;
      case "tool_calls_refused":
        this.#refused.push({
          cap: ev.cap,
          count: ev.count,
          limit: ev.limit,
          key: ev.key,
          message: ev.message,
        });
        break;
      case "plan_decided":
        this.#plans.push({
          plan_hash: ev.planHash,
          decision: ev.decision,
          ...(ev.reason ? { reason: ev.reason } : {}),
          ...(ev.savedPath ? { saved_path: ev.savedPath } : {}),
          ...(ev.planId ? { plan_id: ev.planId } : {}),
        });
        break;
      default:
        assertNever(ev);
    }
  }

  /** The logbook drafts the turn's plans left. */
  elogDrafts(drafts: DraftJson[]): void {
    this.#drafts = drafts;
  }

  /** The session's records that could not be saved, and why (undefined: all saved). */
  sessionUnsaved(why: string | undefined): void {
    this.#unsaved = why;
  }

  build(nowMs: number): AskResult {
    // A change that was proposed but could not be approved here is not an answer to the request.
    const deferred = this.#plans.some((p) => p.decision === "deferred");
    const exit = this.#cancelled
      ? Exit.CANCELLED
      : !this.#complete || this.#error || !this.#recorded || this.#unsaved
      ? Exit.FAILURE
      : deferred
      ? Exit.APPROVAL_REQUIRED
      : Exit.OK;
    return {
      schema: ASK_SCHEMA,
      ok: exit === Exit.OK,
      answer: (this.#answer + this.#streaming).trim(),
      model: this.#model,
      model_name: this.modelName,
      tool_calls: [...this.#calls.values()],
      usage: this.#usage,
      duration_ms: Math.round(nowMs - this.startedMs),
      cancelled: this.#cancelled,
      error: this.#error,
      plans: this.#plans,
      hooks: this.#hooks,
      tool_calls_refused: this.#refused,
      recorded: this.#recorded,
      elog_drafts: this.#drafts,
      session_saved: this.#unsaved === undefined,
      ...(this.#unsaved ? { session_error: this.#unsaved } : {}),
      exit_code: exit,
    };
  }
}

/** A cut result's stand-in, naming where the loop kept the whole (`fullOutput`). */
function withFullOutput(result: unknown, fullOutput: string | null | undefined): unknown {
  if (fullOutput === undefined) return result;
  const shown = result as Partial<TruncatedResult> | null;
  if (!shown?.truncated) return result;
  return { ...shown, truncated: { ...shown.truncated, full_output: fullOutput } };
}
