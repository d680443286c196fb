/**
 * Slash commands of long sessions and delegation: /compact, /agents,
 * /resume, and the lines /cost adds about them.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { CliError } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { style } from "../term/style.ts";
import { untrusted } from "../../util/untrusted_text.ts";

export const SESSION_SLASH_HELP: [string, string][] = [
  ["/compact", "summarise the older conversation now (also automatic near the context limit)"],
  ["/agents", "sub-agents of this session: status, lineage, results"],
  ["/resume [ID]", "list saved sessions, or continue session ID"],
];

/** Runs one of these commands; false when `cmd` is not one of them. */
export async function runSessionSlash(
  cmd: string,
  arg: string,
  app: App,
  io: Io,
): Promise<boolean> {
  const s = style(io.color);
  switch (cmd) {
    case "/compact": {
      const ev = await app.compact(new AbortController().signal);
      io.out(
        ev
          ? `compacted: ~${ev.tokensBefore} → ~${ev.tokensAfter} tokens\n`
          : "nothing to compact yet\n",
      );
      return true;
    }
    case "/resume": {
      if (!arg) {
        const known = await app.sessions.list();
        if (!known.length) io.out("no saved sessions\n");
        for (const k of known.slice(0, 10)) {
          const mark = k.id === app.session.id ? s.green("●") : " ";
          io.out(`  ${mark} ${s.bold(untrusted(k.id))} ${s.dim(k.modified.toISOString())}\n`);
        }
        return true;
      }
      try {
        const left = app.session.id;
        const saved = await app.resume(arg);
        if (saved.cancelled.length) {
          // They would otherwise spend the shared budget for a session no longer shown.
          const runs = untrusted(saved.cancelled.map((r) => `${r.id} (${r.agent})`).join(", "));
          io.out(s.yellow(
            `cancelled sub-agents still running in session ${untrusted(left)}: ${runs}; /resume ${
              untrusted(left)
            } shows them\n`,
          ));
        }
        const asked = saved.session.userInputs();
        io.out(
          untrusted(
            `resumed ${saved.session.id}: ${asked.length} questions, ${saved.runs.length} sub-agent results` +
              `${asked.length ? `; last: ${asked.at(-1)?.slice(0, 80)}` : ""}`,
          ) + "\n",
        );
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        io.err(s.red(`${untrusted(e.message)}\n`));
      }
      return true;
    }
    case "/agents": {
      const runs = app.agents.list();
      if (!runs.length) io.out("no sub-agents in this session\n");
      for (const r of runs) {
        const outcome = r.status === "done"
          ? JSON.stringify(r.result)
          : r.error ?? (r.status === "running" ? "…" : "");
        io.out(
          `  ${s.bold(untrusted(r.id))} ${untrusted(r.agent)} ${
            s.dim(untrusted(`level ${r.level}, from ${r.parentId}`))
          } ${untrusted(r.status)}` +
            ` ${s.dim(`${r.turns} calls, ${r.tokens} tokens`)}\n    ${
              untrusted(outcome.slice(0, 300))
            }\n`,
        );
      }
      return true;
    }
    default:
      return false;
  }
}

/** What /cost adds: the last turn, the context in use, compactions, sub-agents. */
export function sessionCostText(app: App): string {
  const t = app.session.lastTurnUsage;
  const window = app.contextWindow();
  const ctx = app.session.lastCallUsage.promptTokens;
  const runs = app.agents.list();
  // Counts come from the endpoint: shown escaped, as any text from outside.
  let text = untrusted(
    `  last turn: ${t.promptTokens} in · ${t.completionTokens} out · ${t.totalTokens} total`,
  ) + "\n" +
    untrusted(
      `  context: ${ctx} of ${window} tokens (${((100 * ctx) / window).toFixed(1)}%), ` +
        `compacted ${app.session.compactions} times`,
    ) + "\n";
  if (runs.length) {
    const calls = runs.reduce((n, r) => n + r.turns, 0);
    const tokens = runs.reduce((n, r) => n + r.tokens, 0);
    text += `${
      untrusted(`  sub-agents: ${runs.length} runs, ${calls} model calls, ${tokens} tokens`)
    }\n`;
  }
  return text;
}

/** The /context line about skills. */
export function skillsLine(app: App): string {
  return untrusted(
    `  skills: ${app.skills.map((k) => k.name).join(", ") || "none"}; active: ${
      app.activeSkills().map((k) => k.name).join(", ") || "none"
    }`,
  );
}
