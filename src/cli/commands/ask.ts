/**
 * `accel-agent ask`: one question, one answer, never a prompt. Output is the
 * rendered answer, one JSON object (`--json`), or one JSON line per event
 * (`--stream-json`). SIGINT, SIGTERM or SIGHUP cancel within a second (exit
 * 130, 143 or 129), the result still printed — also when the signal came
 * while the program was starting (see `src/cli/early_signals.ts`).
 *
 * The plain answer is printed message by message, once the model has
 * finished each: text the model sent before its call was retried never
 * reaches stdout. Meanwhile a terminal's stderr shows what is awaited and
 * for how long.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import type { Invocation } from "../args/args.ts";
import { AskResultBuilder } from "./ask_result.ts";
import { CliError, UsageError } from "../../app/exit.ts";
import {
  abortOnSignals,
  cancelledBy,
  type EarlyStop,
  type Io,
  readStdin,
  SIGNAL_EXIT,
  type StopSignal,
} from "../../app/io.ts";
import { TerminalRenderer } from "../term/render.ts";
import { settleDrafts } from "../term/elog_after.ts";
import { turnDrafts, TurnNotes } from "../term/elog_turn.ts";
import { style } from "../term/style.ts";
import { terminalJson } from "../../util/untrusted_text.ts";

export async function runAsk(
  app: App,
  inv: Invocation,
  io: Io,
  question?: string,
  signals?: EarlyStop,
): Promise<number> {
  const mode = inv.json ? "json" : inv.streamJson ? "stream" : "human";
  // The stop signals are ours from here; one that came while the program started ends the turn
  // at once (released and taken over in one step: none falls between).
  const controller = new AbortController();
  const early = signals?.received;
  signals?.release();
  using stop = abortOnSignals(controller, cancelledBy, early);
  const text = (question ??
    (io.stdinIsTerminal ? "" : await readQuestion(controller.signal, () => stop.received)))
    .trim();
  if (!text) {
    throw new UsageError('ask needs a question: accel-agent ask "…" or echo "…" | accel-agent ask');
  }
  let model;
  try {
    model = await app.model();
  } catch (e) {
    if (e instanceof CliError && mode !== "human") {
      io.out(
        `${
          terminalJson({
            schema: "accel-agent.ask/1",
            ok: false,
            error: { message: e.message, retryable: false },
            exit_code: e.code,
          }, 0)
        }\n`,
      );
    }
    throw e;
  }
  const result = new AskResultBuilder(model.name, model.model, performance.now());
  // The table library costs tens of milliseconds to load: only the human mode needs it.
  const renderer = mode === "human"
    ? await (async () => {
      const { planColumns, renderPlan } = await import("../term/plan_table.ts");
      return new TerminalRenderer(io, {
        showUsage: false,
        showPlan: (p) => renderPlan(p, style(io.color), planColumns(io)),
        holdText: true,
      });
    })()
    : undefined;
  const notes = new TurnNotes();
  try {
    renderer?.begin();
    for await (const ev of app.turn(text, controller.signal)) {
      result.add(ev);
      notes.add(ev);
      if (mode === "stream") io.out(`${terminalJson(ev, 0)}\n`);
      renderer?.handle(ev);
    }
  } finally {
    renderer?.end();
  }
  // The drafts of the plans that ran are carried, never posted: that is the operator's call.
  const drafts = await settleDrafts(app, await turnDrafts(app.plans, text, notes), {
    ask: false,
    json: mode !== "human",
    decidedBy: "ask",
  }, io);
  result.elogDrafts(drafts.map((d) => d.draft));
  result.sessionUnsaved(app.sessions.unsaved);
  const final = result.build(performance.now());
  if (stop.received && final.cancelled) final.exit_code = SIGNAL_EXIT[stop.received];
  if (mode === "json") io.out(`${terminalJson(final)}\n`);
  else if (mode === "stream") io.out(`${terminalJson({ type: "result", ...final }, 0)}\n`);
  return final.exit_code;
}

/**
 * The question from stdin; a stop signal before it is all read ends the
 * command (a pipe that never closes must not hold a cancelled program).
 */
async function readQuestion(
  signal: AbortSignal,
  received: () => StopSignal | undefined,
): Promise<string> {
  let onAbort = () => {};
  const cancelled = new Promise<never>((_, reject) => {
    onAbort = () => {
      const sig = received() ?? "SIGINT";
      reject(new CliError(`cancelled by ${sig} before the question was read`, SIGNAL_EXIT[sig]));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([readStdin(), cancelled]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
