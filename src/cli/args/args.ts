/**
 * Command-line parsing from the command table (`commands_table.ts`) with
 * node:util parseArgs: flags in any order, before or after the command.
 * Produces a typed command or a {@link UsageError} with one line saying
 * what is wrong and what to do.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { UsageError } from "../../app/exit.ts";
import { type Command, COMMANDS, commandSpec } from "./commands_table.ts";
import { globalHelp } from "./help.ts";
import { type Flag, GLOBAL_FLAGS, str, type Values } from "./table.ts";

export type { Command } from "./commands_table.ts";

export interface Invocation {
  command: Command;
  config?: string;
  model?: string;
  json: boolean;
  streamJson: boolean;
  noColor: boolean;
  /** `--resume [ID]`: continue a saved session; "" means the newest. */
  resume?: string;
  /** `--profile NAME`, overriding `[profile] name`. */
  profile?: string;
}

/** The global help (kept under this name for callers that print it). */
export const USAGE = globalHelp();

type ParseOption = { type: "string" | "boolean"; short?: string; multiple?: boolean };

/** Every flag of every command, as parseArgs options; a name means one thing everywhere. */
function allOptions(): Record<string, ParseOption> {
  const options: Record<string, ParseOption> = {};
  for (const f of [...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags)]) {
    const known = options[f.name];
    if (known && known.type !== f.type) {
      throw new Error(`flag --${f.name} is declared as ${known.type} and ${f.type}`);
    }
    options[f.name] = {
      type: f.type,
      ...(f.short ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
    };
  }
  return options;
}

const OPTIONS = allOptions();

/** Parses arguments; `stdinIsTerminal` decides what no command means. */
export function parseInvocation(args: string[], stdinIsTerminal: boolean): Invocation {
  const { values, positionals, tokens } = parseArgs({
    args: bareResume(joinRelativeTimes(args)),
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const [first, ...rest] = positionals;
  const name = first ?? (stdinIsTerminal ? "start" : "ask");
  const spec = commandSpec(name);
  if (!spec) {
    throw new UsageError(
      `unknown command "${name}"; commands: ${
        COMMANDS.map((c) => c.name).join(", ")
      } (see accel-agent --help)`,
    );
  }
  const allowed = new Map<string, Flag>(
    [...GLOBAL_FLAGS, ...spec.flags].map((f) => [f.name, f]),
  );
  for (const t of tokens) {
    if (t.kind !== "option") continue;
    const flag = allowed.get(t.name);
    const shown = t.rawName;
    if (!flag) {
      const elsewhere = t.name in OPTIONS;
      throw new UsageError(
        elsewhere
          ? `${shown} is not an option of "${name}"; see accel-agent ${name} --help`
          : `unknown option ${shown} for "${name}"; see accel-agent ${name} --help`,
      );
    }
    if (flag.type === "string" && t.value === undefined) {
      throw new UsageError(`${shown} needs a value; see accel-agent ${name} --help`);
    }
    if (flag.type === "boolean" && t.inlineValue) {
      throw new UsageError(`${shown} takes no value; see accel-agent ${name} --help`);
    }
  }
  const v = values as Values;
  const base = {
    config: str(v, "config"),
    model: str(v, "model"),
    json: v.json === true,
    streamJson: v["stream-json"] === true,
    noColor: v["no-color"] === true,
    ...(v.resume !== undefined ? { resume: str(v, "resume") ?? "" } : {}),
    ...(v.profile !== undefined ? { profile: str(v, "profile") } : {}),
  };
  if (v.help === true) {
    return { ...base, command: { kind: "help", ...(first ? { command: name } : {}) } };
  }
  if (v.version === true) return { ...base, command: { kind: "version" } };
  if (base.json && base.streamJson) {
    throw new UsageError("--json and --stream-json exclude each other; pick one");
  }
  return { ...base, command: spec.build(rest, v) };
}

/** `--from -8h` would read "-8h" as an option; bind such values to their option. */
function joinRelativeTimes(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const next = args[i + 1];
    if ((a === "--from" || a === "--to") && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else {
      out.push(a);
    }
  }
  return out;
}

/**
 * `--resume` without an ID means the newest session: when it comes last, or
 * before an option, a command, or text that is no session ID (a question).
 */
function bareResume(args: string[]): string[] {
  return args.map((a, i) => {
    const next = args[i + 1];
    const bare = a === "--resume" &&
      (next === undefined || next.startsWith("-") || commandSpec(next) !== undefined ||
        !/^[\w-]+$/.test(next));
    return bare ? "--resume=" : a;
  });
}
