/**
 * Command-line parsing from the command table (`commands_table.ts`): flags
 * in any order, before or after the command.
 * Produces a typed command or a {@link UsageError} with one line saying
 * what is wrong and what to do.
 *
 * @module
 */
import { UsageError } from "../../app/exit.ts";
import { type Command, COMMANDS, commandSpec } from "./commands_table.ts";
import { type Flag, GLOBAL_FLAGS, list, str, type Values } from "./table.ts";

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

/** Every flag of every command by long name; a name means one thing everywhere. */
function allFlags(): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  for (const f of [...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags)]) {
    const known = flags.get(f.name);
    if (known && (known.type !== f.type || !!known.multiple !== !!f.multiple)) {
      throw new Error(`flag --${f.name} is declared twice, differently`);
    }
    flags.set(f.name, f);
  }
  return flags;
}

const FLAGS = allFlags();
const SHORT = new Map([...FLAGS.values()].flatMap((f) => f.short ? [[f.short, f]] : []));

/** One flag as written: its long name (or what was written, when unknown) and its value. */
interface OptionToken {
  name: string;
  rawName: string;
  value?: string;
  inline: boolean;
}

/**
 * Splits the arguments into flags and positionals: `--name`, `--name=value`,
 * `--name value` (for a flag that takes a value), `-x`, `-x value`, `-xvalue`;
 * everything after `--` is positional.
 */
function tokenize(args: string[]): { options: OptionToken[]; positionals: string[] } {
  const options: OptionToken[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      positionals.push(a);
      continue;
    }
    const long = a.startsWith("--");
    const eq = long ? a.indexOf("=") : -1;
    const written = eq >= 0 ? a.slice(0, eq) : long ? a : a.slice(0, 2);
    const flag = long ? FLAGS.get(written.slice(2)) : SHORT.get(written.slice(1));
    let value = eq >= 0 ? a.slice(eq + 1) : !long && a.length > 2 ? a.slice(2) : undefined;
    const inline = value !== undefined;
    if (!inline && flag?.type === "string") value = args[++i];
    options.push({ name: flag?.name ?? written, rawName: flag ? written : a, value, inline });
  }
  return { options, positionals };
}

/** Parses arguments; `stdinIsTerminal` decides what no command means. */
export function parseInvocation(args: string[], stdinIsTerminal: boolean): Invocation {
  const { options, positionals } = tokenize(bareResume(joinRelativeTimes(args)));
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
  const v: Values = {};
  for (const t of options) {
    const flag = allowed.get(t.name);
    const shown = t.rawName;
    if (!flag) {
      throw new UsageError(
        FLAGS.has(t.name)
          ? `${shown} is not an option of "${name}"; see accel-agent ${name} --help`
          : `unknown option ${shown} for "${name}"; see accel-agent ${name} --help`,
      );
    }
    if (flag.type === "boolean") {
      if (t.inline) throw new UsageError(`${shown} takes no value; see accel-agent ${name} --help`);
      v[flag.name] = true;
    } else if (t.value === undefined) {
      throw new UsageError(`${shown} needs a value; see accel-agent ${name} --help`);
    } else if (flag.multiple) {
      v[flag.name] = [...list(v, flag.name), t.value];
    } else {
      v[flag.name] = t.value;
    }
  }
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
