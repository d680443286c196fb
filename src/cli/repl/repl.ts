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
import * as readline from "node:readline";
import process from "node:process";
import { VERSION } from "../../version.ts";
import type { App } from "../../app/app.ts";
import { Exit } from "../../app/exit.ts";
import { History } from "./history.ts";
import { abortOnSignals, type Io, SIGNAL_EXIT, type StopSignal } from "../../app/io.ts";
import { TerminalApprover } from "../term/approval_prompt.ts";
import { TerminalOperator } from "./ask_user_prompt.ts";
import { subagentLine, TerminalRenderer } from "../term/render.ts";
import { runSlash } from "./slash.ts";
import { style } from "../term/style.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";

type Input = { kind: "line"; text: string } | { kind: "interrupt"; empty: boolean } | {
  kind: "eof";
};

export async function runRepl(app: App, io: Io): Promise<number> {
  const s = style(io.color);
  // Say what is missing before showing a prompt that cannot work.
  app.checkModel();
  const history = new History(`${app.stateDir}/history`, app.loaded.config.ui.history_size);
  await history.load();
  const m = app.modelInfo;
  io.out(
    `${s.bold("accel-agent")} ${VERSION} · ${app.cs.kind} · model ${m.name} (${m.model})\n` +
      s.dim("Ask about the machine in plain language. /help for commands, Ctrl-D to leave.\n"),
  );
  if (app.profile.name !== "operator") io.out(s.yellow(`profile ${app.profile.name}\n`));
  const asked = app.session.userInputs().length;
  if (asked) {
    io.out(s.dim(`continuing session ${untrusted(app.session.id)} (${asked} questions so far)\n`));
  }
  // Plans are approved here, in the terminal; the table and prompt replace the live output.
  let renderer: TerminalRenderer | undefined;
  // Clarifying questions are asked here too, the same way.
  app.operator = new TerminalOperator(io, () => renderer?.pause());
  // (sim-eval with auto_approve keeps its automatic approver.)
  if (!app.loaded.config.profile.auto_approve) {
    app.plans.approver = new TerminalApprover(io, () => renderer?.pause());
  }
  // Load the model client while the operator types the first question.
  app.model().catch(() => {});
  // A background sub-agent that ends says so at once, at the prompt or mid-answer.
  let atPrompt: readline.Interface | undefined;
  const unsubscribe = app.agents.subscribe((ev) => {
    if (ev.status === "started" || !app.agents.get(ev.id)?.background) return;
    const line = s.cyan(`  ⚑ background ${subagentLine(ev)}; /agents shows the result`);
    if (atPrompt) {
      io.out(`\r\x1b[2K${line}\n`);
      atPrompt.prompt(true);
    } else {
      renderer?.pause();
      io.err(`${line}\n`);
    }
  });
  let lastInterrupt = false;
  for (;;) {
    const input = await readLine(s.cyan("accel› "), history.entries, (rl) => (atPrompt = rl));
    if (input.kind === "eof") break;
    if (input.kind === "interrupt") {
      if (input.empty && lastInterrupt) break;
      lastInterrupt = input.empty;
      if (input.empty) io.err(s.dim("(Ctrl-C again to leave, or /quit)\n"));
      continue;
    }
    lastInterrupt = false;
    const text = input.text.trim();
    if (!text) continue;
    await history.add(text);
    if (text.startsWith("/")) {
      if ((await runSlash(text, app, io)) === "quit") break;
      continue;
    }
    renderer = new TerminalRenderer(io, { showUsage: true });
    const stopped = await turn(app, io, text, renderer);
    if (stopped) {
      // The terminal is gone or the program was told to end: the turn (and any plan) stopped,
      // restored and was recorded; the session is saved as it goes.
      unsubscribe();
      return SIGNAL_EXIT[stopped];
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
 * Runs one turn. Ctrl-C cancels it and the session goes on; returns SIGTERM
 * or SIGHUP when one of them stopped it, and the REPL then ends.
 */
async function turn(
  app: App,
  io: Io,
  text: string,
  renderer: TerminalRenderer,
): Promise<Exclude<StopSignal, "SIGINT"> | undefined> {
  const controller = new AbortController();
  using stop = abortOnSignals(controller, (sig) => STOPPED_BY[sig]);
  try {
    renderer.begin();
    for await (const ev of app.turn(text, controller.signal)) renderer.handle(ev);
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
  return stop.received === "SIGINT" ? undefined : stop.received;
}

/** One line from the terminal; the terminal is back in normal mode afterwards. */
function readLine(
  prompt: string,
  history: string[],
  onOpen: (rl: readline.Interface | undefined) => void,
): Promise<Input> {
  const rl = readline.createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: Deno.stdin.isTerminal(),
    history: [...history],
    historySize: Math.max(history.length, 1000),
    removeHistoryDuplicates: true,
  });
  return new Promise((resolve) => {
    let settled = false;
    const settle = (input: Input) => {
      if (settled) return;
      settled = true;
      onOpen(undefined);
      rl.close();
      resolve(input);
    };
    rl.on("SIGINT", () => {
      const empty = (rl as unknown as { line: string }).line === "";
      process.stdout.write("\n");
      settle({ kind: "interrupt", empty });
    });
    rl.on("close", () => settle({ kind: "eof" }));
    onOpen(rl);
    rl.question(prompt, (text) => settle({ kind: "line", text }));
  });
}
