/**
 * The shape of the command-line table: each command with its flags, from
 * which `args.ts` parses and `help.ts` writes `--help`. The table itself is
 * `commands_table.ts`; the flags every command takes are here.
 *
 * @module
 */
import { UsageError } from "../../app/exit.ts";

/** One flag: how it parses and how `--help` shows it. */
export interface Flag {
  /** Long name without the dashes (`no-color`). */
  name: string;
  /** One-letter form without the dash (`c` for `-c`). */
  short?: string;
  type: "string" | "boolean";
  /** Repeatable (`--device A --device B`); the value is then a list. */
  multiple?: boolean;
  /** The value's placeholder in `--help` (FILE, N, NAME…). */
  value?: string;
  /** One line, in sentence case, without a final period. */
  description: string;
  /** The default as `--help` says it (none: no default, or it depends). */
  default?: string;
}

/** Parsed flag values by long name, as node:util parseArgs gives them. */
export type Values = Record<string, string | boolean | string[] | undefined>;

/** One command: its help lines, its flags, and how its arguments become a {@link Command}. */
export interface CommandSpec<C = unknown> {
  name: string;
  /** Lines of the global help: arguments after the command name, and what it does. */
  usage: readonly (readonly [string, string])[];
  /** Flags of this command beyond {@link GLOBAL_FLAGS}. */
  flags: readonly Flag[];
  /** More lines for `accel-agent COMMAND --help` (rules between flags, examples). */
  notes?: readonly string[];
  /** The positionals after the command name and the flag values, as a command; throws UsageError. */
  build(rest: string[], values: Values): C;
  /** Files this command line names, which the launcher grants for reading. */
  files?(command: C): string[];
}

/** Flags every command takes, before or after the command name. */
export const GLOBAL_FLAGS: readonly Flag[] = [
  {
    name: "config",
    short: "c",
    type: "string",
    value: "FILE",
    description: "configuration file (env ACCEL_AGENT_CONFIG)",
    default: "configs/default.toml",
  },
  {
    name: "model",
    short: "m",
    type: "string",
    value: "NAME",
    description: "named model from [llm.models] (env ACCEL_AGENT_MODEL)",
  },
  {
    name: "json",
    type: "boolean",
    description: "one JSON object on stdout (ask, get, search, index, logs, display, plot)",
  },
  { name: "no-color", type: "boolean", description: "plain output (also NO_COLOR=1)" },
  {
    name: "profile",
    type: "string",
    value: "NAME",
    description: "observer | operator | sim-eval",
    default: "[profile] name, operator",
  },
  { name: "help", short: "h", type: "boolean", description: "this help; after a command, its own" },
  { name: "version", short: "V", type: "boolean", description: "print the version" },
];

/** The value of a string flag (the last one given). */
export function str(v: Values, name: string): string | undefined {
  const x = v[name];
  return typeof x === "string" ? x : undefined;
}

/** Whether a boolean flag was given. */
export function bool(v: Values, name: string): boolean {
  return v[name] === true;
}

/** Every value of a repeatable flag. */
export function list(v: Values, name: string): string[] {
  const x = v[name];
  return Array.isArray(x) ? x : typeof x === "string" ? [x] : [];
}

/** A whole number flag within bounds, or its default. */
export function intOption(
  name: string,
  raw: string | undefined,
  dflt: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} "${raw}" must be a whole number from ${min} to ${max}`);
  }
  return n;
}

/** Throws when a command that takes no arguments got some. */
export function noPositionals(name: string, rest: string[]): void {
  if (rest.length) throw new UsageError(`${name} takes no arguments, got "${rest.join(" ")}"`);
}
