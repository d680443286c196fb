/**
 * `--help`, written from the command table: the global help lists every
 * command and the flags each takes; `accel-agent COMMAND --help` shows one
 * command with its flags and the global ones.
 *
 * @module
 */
import { COMMANDS, commandSpec } from "./commands_table.ts";
import { type Flag, GLOBAL_FLAGS } from "./table.ts";
import { hanging, wrapText } from "../../util/text_wrap.ts";

const TITLE = "accel-agent — a terminal assistant for accelerator control rooms";
const EXIT_CODES = "Exit codes: 0 answered, 1 runtime failure, 2 usage or configuration error, " +
  "3 approval required but no terminal, 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.";

/** The width help is written for when none is given (a pipe, a file). */
export const HELP_COLUMNS = 100;

/** A flag's left part: `-c, --config FILE`. */
function flagLabel(f: Flag): string {
  return `${f.short ? `-${f.short}, ` : "    "}--${f.name}${f.value ? ` ${f.value}` : ""}`;
}

/** Flags as help lines, descriptions wrapped beside them within `columns`. */
function flagLines(flags: readonly Flag[], columns: number): string[] {
  const width = Math.max(...flags.map((f) => flagLabel(f).length));
  return flags.flatMap((f) =>
    hanging(
      `  ${flagLabel(f)}`,
      `${f.description}${f.default ? ` (default ${f.default})` : ""}`,
      width + 4,
      columns,
    )
  );
}

/** Usage lines: `accel-agent ARGS` and what it does, wrapped within `columns`. */
function usageLines(usage: readonly (readonly [string, string])[], columns: number): string[] {
  const width = Math.max(...usage.map(([args]) => `  accel-agent ${args}`.length)) + 2;
  // At most half the terminal: a longer command has its description on the lines under it.
  const indent = Math.min(width, Math.floor(columns / 2));
  // A bracketed option (`[--tasks SEL]`) is one piece when the line wraps.
  const joined = (args: string) =>
    args.replace(/\[[^\]\n]*\]/g, (m) => m.replaceAll(" ", "\u00a0"));
  return usage.flatMap(([args, what]) =>
    hanging(`  accel-agent ${joined(args)}`, what, indent, columns)
      .map((l) => l.replaceAll("\u00a0", " "))
  );
}

/** The global help, `columns` wide at most: every command, the global flags, each command's flags, exit codes. */
export function globalHelp(columns = HELP_COLUMNS): string {
  const commandFlags = COMMANDS.filter((c) => c.flags.length).flatMap((c) =>
    hanging(
      `  ${c.name}:`,
      c.flags.map((f) => `--${f.name}${f.value ? `\u00a0${f.value}` : ""}`).join("  "),
      12,
      columns,
    ).map((l) => l.replaceAll("\u00a0", " "))
  );
  return [
    ...wrapText(TITLE, columns),
    "",
    "Usage:",
    ...usageLines(COMMANDS.flatMap((c) => c.usage), columns),
    "",
    "Options (before or after the command):",
    ...flagLines(GLOBAL_FLAGS, columns),
    "",
    ...wrapText("Options of one command (accel-agent COMMAND --help says more):", columns),
    ...commandFlags,
    "",
    ...wrapText(EXIT_CODES, columns),
  ].join("\n");
}

/** One command's help, `columns` wide at most, or undefined when there is no such command. */
export function commandHelp(name: string, columns = HELP_COLUMNS): string | undefined {
  const spec = commandSpec(name);
  if (!spec) return undefined;
  return [
    "Usage:",
    ...usageLines(spec.usage, columns),
    ...(spec.flags.length ? ["", "Options:", ...flagLines(spec.flags, columns)] : []),
    ...(spec.notes?.length ? ["", ...spec.notes.flatMap((n) => wrapText(n, columns))] : []),
    "",
    "Global options:",
    ...flagLines(GLOBAL_FLAGS, columns),
    "",
    ...wrapText(EXIT_CODES, columns),
  ].join("\n");
}
