/**
 * `--help`, written from the command table: the global help lists every
 * command and the flags each takes; `accel-agent COMMAND --help` shows one
 * command with its flags and the global ones.
 *
 * @module
 */
import { COMMANDS, commandSpec } from "./commands_table.ts";
import { type Flag, GLOBAL_FLAGS } from "./table.ts";

const TITLE = "accel-agent — a terminal assistant for accelerator control rooms";
const EXIT_CODES = `Exit codes: 0 answered, 1 runtime failure, 2 usage or configuration error,
3 approval required but no terminal, 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.`;

/** A flag as a help line: `-c, --config FILE   description (default …)`. */
function flagLine(f: Flag, width: number): string {
  const left = `${f.short ? `-${f.short}, ` : "    "}--${f.name}${f.value ? ` ${f.value}` : ""}`;
  const dflt = f.default ? ` (default ${f.default})` : "";
  return `  ${left.padEnd(width)}  ${f.description}${dflt}`;
}

function flagLines(flags: readonly Flag[]): string[] {
  const width = Math.max(
    ...flags.map((f) => `    --${f.name}${f.value ? ` ${f.value}` : ""}`.length),
  );
  return flags.map((f) => flagLine(f, width));
}

/** The global help: every command, the global flags, each command's flags, exit codes. */
export function globalHelp(): string {
  const usage = COMMANDS.flatMap((c) => c.usage);
  const width = Math.max(...usage.map(([args]) => args.length)) + 12;
  const commandFlags = COMMANDS.filter((c) => c.flags.length).map((c) =>
    `  ${`${c.name}:`.padEnd(10)}${
      c.flags.map((f) => `--${f.name}${f.value ? ` ${f.value}` : ""}`).join("  ")
    }`
  );
  return [
    TITLE,
    "",
    "Usage:",
    ...usage.map(([args, what]) => `  ${`accel-agent ${args}`.padEnd(width)} ${what}`),
    "",
    "Options (before or after the command):",
    ...flagLines(GLOBAL_FLAGS),
    "",
    "Options of one command (accel-agent COMMAND --help says more):",
    ...commandFlags,
    "",
    EXIT_CODES,
  ].join("\n");
}

/** One command's help, or undefined when there is no such command. */
export function commandHelp(name: string): string | undefined {
  const spec = commandSpec(name);
  if (!spec) return undefined;
  const width = Math.max(...spec.usage.map(([args]) => args.length)) + 12;
  return [
    "Usage:",
    ...spec.usage.map(([args, what]) => `  ${`accel-agent ${args}`.padEnd(width)} ${what}`),
    ...(spec.flags.length ? ["", "Options:", ...flagLines(spec.flags)] : []),
    ...(spec.notes?.length ? ["", ...spec.notes] : []),
    "",
    "Global options:",
    ...flagLines(GLOBAL_FLAGS),
    "",
    EXIT_CODES,
  ].join("\n");
}
