/**
 * Slash commands of the REPL.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { ConfigError } from "../../config/mod.ts";
import { CliError } from "../../app/exit.ts";
import { savePlan } from "../../plan/plan_file.ts";
import { planIdOf } from "../../safety/approval.ts";
import type { Io } from "../../app/io.ts";
import { style } from "../term/style.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { hanging, wrapText } from "../../util/text_wrap.ts";
import { costText } from "./cost.ts";
import { runSessionSlash, SESSION_SLASH_HELP, skillsLine } from "./slash_sessions.ts";
import { runSafetySlash, SAFETY_SLASH_HELP } from "./slash_safety.ts";

export const SLASH_HELP: [string, string][] = [
  ["/help", "this list"],
  ["/context", "what the model sees: system prompt, files, conversation size"],
  ["/history", "your questions in this session"],
  ["/provider [NAME]", "list the configured models, or switch to NAME"],
  ["/tools", "the tools the agent can use"],
  ["/cost", "tokens used in this session by model (and cost when prices are configured)"],
  ["/clear", "start a new conversation (the cost so far is kept)"],
  ...SESSION_SLASH_HELP,
  [
    "/display [NAME …]",
    "open a facility display (MACRO=VALUE after the name); list them without one",
  ],
  ...SAFETY_SLASH_HELP,
  ["/save-plan NAME", "save the last plan approved, to run it again with plan run"],
  ["/quit", "leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)"],
];

/** Every slash command by name, for Tab completion (aliases included). */
export function slashCommands(): string[] {
  const names = SLASH_HELP.map(([c]) => c.split(" ")[0] ?? c);
  return [...new Set([...names, "/exit", "/model"])].sort();
}

/** Runs a slash command; returns "quit" when the REPL should end. */
export async function runSlash(line: string, app: App, io: Io): Promise<"quit" | undefined> {
  const s = style(io.color);
  const [cmd = "", ...rest] = line.trim().split(/\s+/);
  const arg = rest.join(" ");
  switch (cmd) {
    case "/help":
      for (const [c, d] of SLASH_HELP) {
        for (const l of hanging(`  ${s.bold(c)}`, d, 21, io.columns())) io.out(`${l}\n`);
      }
      for (
        const l of wrapText(
          "Ctrl-C cancels the answer in progress; the conversation is kept. " +
            "Tab completes commands and device names; a line ending in \\ continues on the next; " +
            "a pasted block is one message; what you type during an answer goes to the model " +
            "at its next step.",
          io.columns() - 2,
        )
      ) io.out(s.dim(`  ${l}\n`));
      return;
    case "/quit":
    case "/exit":
      return "quit";
    case "/clear":
      app.session.clear();
      io.out("conversation cleared\n");
      return;
    case "/history": {
      const inputs = app.session.userInputs();
      if (!inputs.length) io.out("no questions yet\n");
      inputs.forEach((q, i) => io.out(`  ${s.dim(String(i + 1).padStart(3))} ${untrusted(q)}\n`));
      return;
    }
    case "/tools":
      for (const t of app.tools.list()) {
        io.out(`  ${s.bold(untrusted(t.name))}${t.readOnly ? s.dim(" (read-only)") : ""}\n`);
        const text = untrusted(t.description, { multiline: true });
        for (const l of wrapText(text, io.columns() - 4)) io.out(`    ${l}\n`);
      }
      return;
    case "/cost":
      io.out(costText(app));
      return;
    case "/context":
      io.out(await contextText(app));
      return;
    case "/save-plan": {
      const last = app.plans.service.lastApproved;
      if (!last) {
        io.err(s.red("no plan has been approved in this session\n"));
        return;
      }
      const path = await savePlan(app.plans.plansDir, last.plan, arg || undefined);
      const id = planIdOf(path);
      io.out(
        `saved as ${untrusted(id)} (${
          untrusted(path)
        })\n  to run it again: accel-agent plan show ${id} gives an approval ` +
          `token (--reusable for a procedure run many times), then accel-agent plan run ${id} --approved-hash TOKEN\n`,
      );
      return;
    }
    case "/provider":
    case "/model":
      if (!arg) {
        const models = app.loaded.config.llm.models;
        for (const [name, entry] of Object.entries(models)) {
          const id = typeof entry === "string" ? entry : entry.model;
          const mark = name === app.modelInfo.name ? s.green("●") : " ";
          io.out(`  ${mark} ${s.bold(untrusted(name))} ${s.dim(untrusted(id))}\n`);
        }
        return;
      }
      try {
        const m = app.switchModel(arg);
        io.out(
          `now using ${s.bold(untrusted(m.name))} (${
            untrusted(`${m.model}${m.baseUrl ? ` at ${m.baseUrl}` : ""}`)
          })\n`,
        );
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        io.err(s.red(`${untrusted(e.message)}\n`));
      }
      return;
    case "/display": {
      const { macroArgs, runDisplay } = await import("../commands/display.ts");
      try {
        const [name, ...macros] = rest;
        await runDisplay(app, name || undefined, macroArgs(macros), false, io);
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        io.err(s.red(`${untrusted(e.message)}\n`));
      }
      return;
    }
    default:
      if (await runSessionSlash(cmd, arg, app, io)) return;
      if (await runSafetySlash(cmd, arg, app, io)) return;
      io.err(s.red(`unknown command ${untrusted(cmd)}; /help lists the commands\n`));
      return;
  }
}

async function contextText(app: App): Promise<string> {
  const prompt = await app.systemPrompt();
  const files = await app.contextFiles();
  const chars = app.session.messages.reduce((n, m) => n + m.content.length, 0);
  const window = app.modelInfo.contextWindow;
  const used = app.session.lastCallUsage.promptTokens;
  const lines = [
    `  model: ${app.modelInfo.name} (${app.modelInfo.model})`,
    `  system prompt: ${prompt.length} characters (~${Math.ceil(prompt.length / 4)} tokens)`,
    `  facility knowledge: ${app.loaded.config.agent.agent_md || "none"}`,
    `  context files: ${files.length ? files.map((f) => f.path).join(", ") : "none"}`,
    `  conversation: ${app.session.messages.length} messages, ${chars} characters`,
    `  last prompt: ${used} tokens${
      window ? ` of ${window} (${((100 * used) / window).toFixed(1)}%)` : ""
    }`,
    `  tools: ${app.tools.names().join(", ")}`,
    skillsLine(app),
  ];
  return lines.map((l) => untrusted(l)).join("\n") + "\n";
}
