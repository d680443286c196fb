/**
 * The interactive session: a line editor with persistent history, slash
 * commands, and streamed answers. Ctrl-C cancels the answer in progress and
 * keeps the conversation; Ctrl-C twice at an empty prompt, Ctrl-D or /quit
 * leave. SIGTERM or SIGHUP (the terminal closed) during an answer stops it
 * as Ctrl-C does — a plan restores what it changed and is recorded — and
 * then the REPL ends with 143 or 129.
 *
 * @module
 */
import type * as readline from "node:readline";
import { VERSION } from "../../version.ts";
import type { App } from "../../app/app.ts";
import { Exit } from "../../app/exit.ts";
import { History } from "./history.ts";
import { abortOnSignals, type Io, SIGNAL_EXIT, type StopSignal } from "../../app/io.ts";
import { TerminalApprover } from "../term/approval_prompt.ts";
import { TerminalOperator } from "./ask_user_prompt.ts";
import { subagentLine, TerminalRenderer } from "../term/render.ts";
import { runSlash, slashCommands } from "./slash.ts";
import { style } from "../term/style.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";
import { Completer, gatherNames } from "./completion.ts";
import { PromptSigint, readMessage } from "./line_input.ts";
import { PASTED_BREAK } from "./paste.ts";
import { TurnInput } from "./turn_input.ts";
import { turnDrafts, TurnNotes } from "../term/elog_turn.ts";

export async function runRepl(app: App, io: Io): Promise<number> {
  const s = style(io.color);
  // Say what is missing before showing a prompt that cannot work.
  app.checkModel();
  const history = new History(`${app.stateDir}/history`, app.loaded.config.ui.history_size);
  const unread = await history.load();
  if (unread) io.err(`accel-agent: ${untrusted(unread)}\n`);
  io.out(
    `${statusLine(app, s)}\n` +
      s.dim("Ask about the machine in plain language. /help for commands, Ctrl-D to leave.\n"),
  );
  const asked = app.session.userInputs().length;
  if (asked) {
    io.out(s.dim(`continuing session ${untrusted(app.session.id)} (${asked} questions so far)\n`));
  }
  // Plans are approved here, in the terminal; the table and prompt replace the live output.
  let renderer: TerminalRenderer | undefined;
  // What the operator types during a turn; a prompt holds the keys while it is up.
  let typing: TurnInput | undefined;
  // Notices that arrive while a prompt is up wait below it: nothing comes between the
  // approval table's last line and its question.
  let prompts = 0;
  const waiting: string[] = [];
  const beforePrompt = () => {
    const release = typing?.hold();
    renderer?.pause();
    prompts++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      prompts--;
      release?.();
      if (prompts === 0) { for (const line of waiting.splice(0)) io.err(`${line}\n`); }
    };
  };
  // Clarifying questions are asked here too, the same way.
  app.operator = new TerminalOperator(io, beforePrompt);
  // (sim-eval with auto_approve keeps its automatic approver.)
  if (!app.loaded.config.profile.auto_approve) {
    app.plans.approver = new TerminalApprover(io, beforePrompt);
  }
  const devices = app.devices;
  const completer = new Completer(
    slashCommands(),
    devices && (async () => gatherNames((await devices.index()).nameChunks())),
  );
  // Typed during a turn and not taken by the agent: the next question.
  let next: string | undefined;
  // Load the model client while the operator types the first question.
  app.model().catch(() => {});
  // A background sub-agent that ends says so at once, at the prompt or mid-answer.
  let atPrompt: readline.Interface | undefined;
  const unsubscribe = app.agents.subscribe((ev) => {
    if (ev.status === "started" || !app.agents.get(ev.id)?.background) return;
    const line = s.cyan(`  ⚑ background ${subagentLine(ev)}; /agents shows the result`);
    if (prompts > 0) {
      waiting.push(line);
    } else if (atPrompt) {
      io.out(`\r\x1b[2K${line}\n`);
      atPrompt.prompt(true);
    } else {
      renderer?.pause();
      io.err(`${line}\n`);
    }
  });
  let lastInterrupt = false;
  using sigint = new PromptSigint();
  for (;;) {
    const prompt = s.cyan("accel› ");
    const input = next !== undefined ? { kind: "line" as const, text: next } : await readMessage({
      prompt,
      continuation: s.cyan("     … "),
      history: history.entries,
      complete: (line) => completer.complete(line),
      onOpen: (rl) => (atPrompt = rl),
      sigint,
    });
    if (next !== undefined) io.out(`${prompt}${untrusted(next, { multiline: true })}\n`);
    next = undefined;
    if (input.kind === "eof") break;
    if (input.kind === "stop") {
      unsubscribe();
      // The prompt's line ends here, so what the shell prints next starts on a line of its own.
      io.out("\n");
      return SIGNAL_EXIT[input.signal];
    }
    if (input.kind === "interrupt") {
      if (input.empty && lastInterrupt) break;
      lastInterrupt = input.empty;
      if (input.empty) io.err(s.dim("(Ctrl-C again to leave, or /quit)\n"));
      continue;
    }
    lastInterrupt = false;
    const text = input.text.trim();
    if (!text) continue;
    // A turn handles SIGINT itself (it cancels the answer); so do the prompts a command shows.
    sigint.disarm();
    // One entry a message: recalled with ↑, a message of several lines is one again.
    const unsaved = await history.add(text.replaceAll("\n", PASTED_BREAK));
    if (unsaved) io.err(`accel-agent: ${untrusted(unsaved)}\n`);
    if (text.startsWith("/")) {
      if ((await runSlash(text, app, io)) === "quit") break;
      continue;
    }
    renderer = new TerminalRenderer(io, { showUsage: true });
    const queue = new LocalQueue();
    const steering = app.steering ?? queue;
    typing = new TurnInput((line) => {
      steering.push(line);
      // On a line of its own: the answer so far is flushed first, and the spinner resumes.
      renderer?.pause();
      io.out(s.dim(`› ${untrusted(line)}  (queued for the next step)\n`));
      renderer?.begin();
    });
    const notes = new TurnNotes();
    const signal = await turn(app, io, text, renderer, typing, notes);
    typing = undefined;
    // Each plan that reached the machine: its logbook draft, post / edit / skip (kept when the
    // terminal is going away). Loaded once a plan has ended, not with the session.
    if (app.plans.elogIfOpen()) {
      const { settleDrafts } = await import("../term/elog_after.ts");
      await settleDrafts(app, await turnDrafts(app.plans, text, notes), {
        ask: !signal || signal === "SIGINT",
        json: false,
        decidedBy: "operator: terminal",
      }, io);
    }
    const left = steering.take();
    if (left.length && !signal) next = left.join("\n");
    else if (left.length) {
      io.err(s.dim(`  not sent, the answer was cancelled: ${untrusted(left.join(" / "))}\n`));
    }
    if (signal && signal !== "SIGINT") {
      // The terminal is gone or the program was told to end: the turn (and any plan) stopped,
      // restored and was recorded; the session is saved as it goes.
      unsubscribe();
      return SIGNAL_EXIT[signal];
    }
  }
  unsubscribe();
  io.out("\n");
  return Exit.OK;
}

/** The reason a turn stopped, for each stop signal. */
const STOPPED_BY: Record<StopSignal, string> = {
  SIGINT: "cancelled by Ctrl-C",
  SIGTERM: "stopped by SIGTERM",
  SIGHUP: "stopped: the terminal was closed (SIGHUP)",
};

/**
 * Runs one turn; returns the signal that stopped it, if any. After Ctrl-C
 * (SIGINT) the session goes on; after SIGTERM or SIGHUP the REPL ends.
 */
async function turn(
  app: App,
  io: Io,
  text: string,
  renderer: TerminalRenderer,
  typing: TurnInput,
  notes: TurnNotes,
): Promise<StopSignal | undefined> {
  const controller = new AbortController();
  using stop = abortOnSignals(controller, (sig) => STOPPED_BY[sig]);
  using _typing = typing;
  try {
    renderer.begin();
    typing.start();
    for await (const ev of app.turn(text, controller.signal)) {
      renderer.handle(ev);
      notes.add(ev);
      // Listen again after an event; a no-op while a prompt (approval, question) holds the keys.
      typing.start();
    }
  } catch (e) {
    // A bug in one turn must not end the shift's session.
    renderer.end();
    const message = errorMessage(e);
    io.err(
      style(io.color).red(`  internal error: ${untrusted(message)} (the session is kept)\n`),
    );
  } finally {
    renderer.end();
  }
  return stop.received;
}

/** The one-line status at start: version, model, backend, profile. */
function statusLine(app: App, s: ReturnType<typeof style>): string {
  const m = app.modelInfo;
  const name = untrusted(app.profile.name);
  const profile = app.profile.name === "operator" ? `profile ${name}` : s.yellow(`profile ${name}`);
  return `${s.bold("accel-agent")} ${VERSION} · model ${untrusted(m.name)} (${
    untrusted(m.model)
  }) · ${untrusted(app.cs.kind)} · ${profile}`;
}

/** Steering kept by the REPL while the agent loop cannot take it: sent when the turn ends. */
class LocalQueue {
  #items: string[] = [];
  push(text: string): void {
    if (text.trim()) this.#items.push(text.trim());
  }
  take(): string[] {
    return this.#items.splice(0);
  }
}
