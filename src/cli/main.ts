/**
 * The command line: parse, load, dispatch, and turn every expected failure
 * into a one-line message and an exit code. `main.ts` exits with the code.
 * Messages quote plan, file and service text, so they are shown through
 * {@link untrusted}.
 *
 * @module
 */
import { glanceConfig } from "../config/glance.ts";
import { evalArgs } from "./args/eval_args.ts";
import { parseInvocation } from "./args/args.ts";
import { commandHelp, globalHelp, HELP_COLUMNS } from "./args/help.ts";
import { VERSION } from "../version.ts";
import { CliError, Exit } from "../app/exit.ts";
import { denoIo, type EarlyStop, type Io, SIGNAL_EXIT } from "../app/io.ts";
import { holdStopSignals } from "./early_signals.ts";
import { errorJson, type ErrorKind, wantsJson } from "./term/json_error.ts";
import { untrusted } from "../util/untrusted_text.ts";
import { warnUnfinished } from "./term/unfinished_notice.ts";

/**
 * Runs the program; returns the exit code. Each command's module is loaded
 * only when that command runs, to keep start-up short.
 */
export async function main(args: string[], signals?: EarlyStop): Promise<number> {
  // Under --json, stdout holds exactly one JSON object: if the command printed none
  // before it failed, the error is printed as one (see json_error.ts).
  const asked = wantsJson(args);
  let printed = false;
  const tracked = (raw: Io): Io => ({
    ...raw,
    out: (text) => {
      printed = true;
      raw.out(text);
    },
  });
  let io: Io = tracked(denoIo({ noColor: args.includes("--no-color") }));
  const fail = (message: string, kind: ErrorKind, code: number): number => {
    io.err(`accel-agent: ${shown(message)}\n`);
    if (asked.json && !printed) {
      io.out(
        errorJson({ message: message.split("\n")[0] ?? "", kind, code, stream: asked.stream }),
      );
    }
    return code;
  };
  let config: string | undefined;
  try {
    // `eval` parses its own options and builds an app per attempt.
    const forEval = evalArgs(args);
    if (forEval) {
      signals?.release();
      return await (await import("./commands/eval.ts")).runEvalCommand(forEval, io);
    }
    const inv = parseInvocation(args, io.stdinIsTerminal);
    config = inv.config;
    if (inv.command.kind === "help") {
      const name = inv.command.command;
      const columns = io.stdoutIsTerminal ? io.columns() : HELP_COLUMNS;
      const help = name === undefined ? globalHelp(columns) : commandHelp(name, columns);
      if (help === undefined) {
        throw new CliError(`no command "${name}"; see accel-agent --help`, Exit.USAGE);
      }
      io.out(`${help}\n`);
      return Exit.OK;
    }
    if (inv.command.kind === "version") {
      io.out(`accel-agent ${VERSION}\n`);
      return Exit.OK;
    }
    if (inv.command.kind === "permissions") {
      return await (await import("./commands/permissions.ts")).runPermissions(inv, io);
    }
    if (inv.command.kind === "config_show") {
      return await (await import("./commands/config_show.ts")).runConfigShow(inv, io);
    }
    // The REPL's prompt comes up at once; the config's schema and the rest load behind it.
    let early: { erase(): void } | undefined;
    if (inv.command.kind === "repl" && io.stdinIsTerminal && io.stdoutIsTerminal) {
      const glance = await glanceConfig({
        path: inv.config,
        model: inv.model,
        env: { get: io.env },
        cwd: io.cwd,
      });
      const colored = denoIo({ noColor: inv.noColor, colorSetting: glance?.color });
      early = (await import("./repl/early_prompt.ts")).earlyPrompt(glance, colored);
    }
    let app;
    try {
      const { createApp } = await import("../app/app.ts");
      app = await createApp(
        { config: inv.config, model: inv.model, resume: inv.resume, profile: inv.profile },
        io,
      );
    } finally {
      early?.erase();
    }
    io = tracked(denoIo({ noColor: inv.noColor, colorSetting: app.loaded.config.ui.color }));
    try {
      const cmd = inv.command;
      // A plan that did not finish (its process was killed) is said first, whatever was asked.
      if (cmd.kind !== "plan_recover") {
        await warnUnfinished(app, io);
      }
      // `ask` takes the signals that came while the program started over; any other command
      // runs only if none came.
      const asks = takesSignals(inv.command.kind, io);
      const stopped = asks ? undefined : signals?.received;
      if (!asks) signals?.release();
      if (stopped) {
        return fail(
          `cancelled by ${stopped} before the command ran`,
          "cancelled",
          SIGNAL_EXIT[stopped],
        );
      }
      switch (cmd.kind) {
        case "repl":
          app.checkModel();
          // After the prompt is drawn; an operator types far slower than it starts.
          if (app.loaded.config.sandbox.prewarm) app.sandbox.runner.prewarm(200);
          if (!io.stdinIsTerminal) {
            return await (await import("./commands/ask.ts")).runAsk(
              app,
              inv,
              io,
              undefined,
              signals,
            );
          }
          return await (await import("./repl/repl.ts")).runRepl(app, io);
        case "ask":
          if (app.loaded.config.sandbox.prewarm) app.sandbox.runner.prewarm();
          return await (await import("./commands/ask.ts")).runAsk(
            app,
            inv,
            io,
            cmd.question,
            signals,
          );
        case "get":
        case "search":
        case "logs":
          return await (await import("./commands/direct.ts")).runDirect(app, cmd, inv.json, io);
        case "index":
          return await (await import("./commands/device_index.ts")).runIndex(
            app,
            cmd.action,
            inv.json,
            io,
          );
        case "plan_show":
          return await (await import("./commands/plan.ts")).runPlanShow(
            app,
            cmd.file,
            inv.json,
            io,
            cmd.reusable,
          );
        case "plan_run":
          if (!app.profile.plans) {
            throw new CliError(`the ${app.profile.name} profile runs no plans`, Exit.USAGE);
          }
          return await (await import("./commands/plan.ts")).runPlanRun(
            app,
            cmd.file,
            cmd.approvedHash,
            inv.json,
            io,
            cmd.elog,
          );
        case "plan_recover":
          if (!app.profile.plans) {
            throw new CliError(`the ${app.profile.name} profile runs no plans`, Exit.USAGE);
          }
          return await (await import("./commands/recover.ts")).runPlanRecover(
            app,
            cmd.run,
            cmd.dismiss,
            inv.json,
            io,
            cmd.elog,
          );
        case "audit_verify":
          return await (await import("./commands/audit.ts")).runAuditVerify(
            app,
            cmd.file,
            inv.json,
            io,
          );
        case "plot":
          return await (await import("./commands/plot.ts")).runPlot(app, cmd.args, inv.json, io);
        case "display": {
          const m = await import("./commands/display.ts");
          return await m.runDisplay(app, cmd.name, m.macroArgs(cmd.macros), inv.json, io);
        }
        case "elog":
          return await (await import("./commands/elog.ts")).runElog(app, cmd, inv.json, io);
        case "exec":
        case "scripts":
          return await (await import("./commands/sandbox.ts")).runSandboxCommand(
            app,
            cmd,
            inv.json,
            io,
          );
      }
    } finally {
      // The result is out (or the command failed): a signal now must not cut the exit short.
      holdStopSignals(signals);
      await app.close();
    }
  } catch (e) {
    // A path the config names that cannot be used: say which setting, not the OS error alone.
    const problem = await (await import("../app/path_problems.ts")).pathProblem(e, config, io);
    if (problem) return fail(`config error: ${problem}`, "config", Exit.USAGE);
    if (e instanceof CliError) {
      const kind = e.code === Exit.USAGE
        ? "usage"
        : e.code === Exit.CANCELLED || e.code === Exit.TERMINATED || e.code === Exit.HANGUP
        ? "cancelled"
        : "failure";
      return fail(e.message, kind, e.code);
    }
    const { ConfigError } = await import("../config/load.ts");
    if (e instanceof ConfigError) return fail(`config error: ${e.message}`, "config", Exit.USAGE);
    // A bug: one line for the operator; the stack only when asked for.
    const debug = io.env("ACCEL_AGENT_DEBUG") === "1";
    const what = e instanceof Error ? (debug ? e.stack ?? e.message : e.message) : String(e);
    return fail(
      `internal error: ${debug ? what : what.split("\n")[0]}${
        debug ? "" : " (a bug; ACCEL_AGENT_DEBUG=1 shows where)"
      }`,
      "internal",
      Exit.FAILURE,
    );
  }
}

/** Whether the command is `ask` (as a question piped to the REPL is), which listens for signals itself. */
function takesSignals(kind: string, io: Io): boolean {
  return kind === "ask" || (kind === "repl" && !io.stdinIsTerminal);
}

/** An error message as printed: its lines kept, everything else a terminal acts on escaped. */
function shown(message: string): string {
  return untrusted(message, { multiline: true });
}
