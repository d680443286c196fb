/**
 * `accel-agent ask`: one question, one answer, never a prompt. Output is the
 * rendered answer, one JSON object (`--json`), or one JSON line per event
 * (`--stream-json`). SIGINT, SIGTERM or SIGHUP cancel within a second (exit
 * 130, 143 or 129), the result still printed.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import type { Invocation } from "../args/args.ts";
import { AskResultBuilder } from "./ask_result.ts";
import { CliError, UsageError } from "../../app/exit.ts";
import { abortOnSignals, cancelledBy, type Io, readStdin, SIGNAL_EXIT } from "../../app/io.ts";
import { TerminalRenderer } from "../term/render.ts";
import { settleDrafts } from "../term/elog_after.ts";
import { turnDrafts, TurnNotes } from "../term/elog_turn.ts";
import { style } from "../term/style.ts";

export async function runAsk(
  app: App,
  inv: Invocation,
  io: Io,
  question?: string,
): Promise<number> {
  const text = (question ?? (io.stdinIsTerminal ? "" : await readStdin())).trim();
  if (!text) {
    throw new UsageError('ask needs a question: accel-agent ask "…" or echo "…" | accel-agent ask');
  }
  const mode = inv.json ? "json" : inv.streamJson ? "stream" : "human";
  let model;
  try {
    model = await app.model();
  } catch (e) {
    if (e instanceof CliError && mode !== "human") {
      io.out(
        `${
          JSON.stringify({
            schema: "accel-agent.ask/1",
            ok: false,
            error: { message: e.message, retryable: false },
            exit_code: e.code,
          })
        }\n`,
      );
    }
    throw e;
  }
  const controller = new AbortController();
  using stop = abortOnSignals(controller, cancelledBy);
  const result = new AskResultBuilder(model.name, model.model, performance.now());
  // The table library costs tens of milliseconds to load: only the human mode needs it.
  const renderer = mode === "human"
    ? await (async () => {
      const { planColumns, renderPlan } = await import("../term/plan_table.ts");
      return new TerminalRenderer(io, {
        showUsage: false,
        showPlan: (p) => renderPlan(p, style(io.color), planColumns(io)),
      });
    })()
    : undefined;
  const notes = new TurnNotes();
  try {
    renderer?.begin();
    for await (const ev of app.turn(text, controller.signal)) {
      result.add(ev);
      notes.add(ev);
      if (mode === "stream") io.out(`${JSON.stringify(ev)}\n`);
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
  if (mode === "json") io.out(`${JSON.stringify(final, null, 2)}\n`);
  else if (mode === "stream") io.out(`${JSON.stringify({ type: "result", ...final })}\n`);
  return final.exit_code;
}
