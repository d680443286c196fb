/**
 * Every command of `accel-agent`, with its flags: parsing (`args.ts`),
 * `--help` (`help.ts`) and the files the launcher grants
 * (`command_files.ts`) all read this table. A new command is one entry
 * here, one member of `Command` (`command.ts`), and its case in `cli/main.ts`.
 *
 * @module
 */
import { UsageError } from "../../app/exit.ts";
import type { Command } from "./command.ts";
import { logsCommand, planCommand, searchCommand } from "./builders.ts";
import { plotArgs } from "./plot_args.ts";
import { elogCommand, elogFiles } from "./elog_args.ts";
import { type CommandSpec, type Flag, noPositionals, str } from "./table.ts";

export type { Command } from "./command.ts";

const RESUME: Flag = {
  name: "resume",
  type: "string",
  value: "[ID]",
  description: "continue a saved session (without ID: the newest)",
};
const ELOG: Flag = {
  name: "elog",
  type: "string",
  value: "post|skip",
  description: "the logbook draft: post or skip it without asking (scripts)",
};
const LIMIT: Flag = {
  name: "limit",
  type: "string",
  value: "N",
  description: "at most N results",
  default: "50",
};

/** The commands, in the order `--help` lists them. */
export const COMMANDS: readonly CommandSpec<Command>[] = [
  {
    name: "start",
    usage: [["[start]", "interactive session (REPL) on the configured machine"]],
    flags: [RESUME],
    build(rest) {
      noPositionals("start", rest);
      return { kind: "repl" };
    },
  },
  {
    name: "ask",
    usage: [["ask [QUESTION]", "one answer; the question from stdin when not given"]],
    flags: [
      {
        name: "stream-json",
        type: "boolean",
        description: "one JSON line per event, then the result",
      },
      RESUME,
    ],
    build: (rest) => ({ kind: "ask", question: rest.length ? rest.join(" ") : undefined }),
  },
  {
    name: "get",
    usage: [["get DEVICE…", "live values (no model needed)"]],
    flags: [],
    build(rest) {
      if (!rest.length) {
        throw new UsageError(
          "get needs at least one device name, e.g. accel-agent get LINAC:BPM:01:X",
        );
      }
      return { kind: "get", devices: rest };
    },
  },
  {
    name: "search",
    usage: [[
      "search PATTERN|WORDS…",
      "device names by * ? pattern, /regex/ or plain words, ranked (no model needed)",
    ]],
    flags: [
      { name: "subsystem", type: "string", value: "NAME", description: "only this subsystem" },
      { name: "writable", type: "boolean", description: "only devices that can be set" },
      { name: "read-only", type: "boolean", description: "only devices that cannot be set" },
      { name: "pattern", type: "boolean", description: "read the text as a pattern" },
      { name: "words", type: "boolean", description: "read the text as words" },
      LIMIT,
      {
        name: "offset",
        type: "string",
        value: "N",
        description: "skip the first N results",
        default: "0",
      },
    ],
    notes: ["Without --pattern or --words the text decides; quote wildcards in the shell."],
    build: searchCommand,
  },
  {
    name: "index",
    usage: [["index [stats|refresh]", "the device index: what it holds; rebuild it and its cache"]],
    flags: [],
    build(rest) {
      const action = rest[0] ?? "stats";
      if (rest.length > 1 || (action !== "stats" && action !== "refresh")) {
        throw new UsageError("index takes stats or refresh, e.g. accel-agent index refresh");
      }
      return { kind: "index", action };
    },
  },
  {
    name: "logs",
    usage: [["logs elog|alarm|archive", "history in a time range (no model needed)"]],
    flags: [
      { name: "from", type: "string", value: "ISO|-8h", description: "start of the range" },
      { name: "to", type: "string", value: "ISO|now", description: "end of the range" },
      {
        name: "device",
        short: "d",
        type: "string",
        multiple: true,
        value: "D",
        description: "a device (repeatable; required for archive)",
      },
      { name: "text", type: "string", value: "WORDS", description: "entries with these words" },
      {
        name: "severity",
        type: "string",
        value: "MINOR|MAJOR|INVALID",
        description: "alarms of this severity",
      },
      LIMIT,
    ],
    build: logsCommand,
  },
  {
    name: "plan",
    usage: [
      [
        "plan show PLAN [--reusable]",
        "preflight a plan (file or saved ID); issues an approval token",
      ],
      ["plan run PLAN", "preflight, approve in the terminal, execute, audit"],
      [
        "plan run PLAN --approved-hash TOKEN",
        "execute without a prompt with a token from plan show",
      ],
      ["plan recover [RUN] [--dismiss]", "plans that did not finish; restore (or dismiss) one"],
      ["plan run PLAN … --elog post|skip", "then post or skip its logbook draft without asking"],
    ],
    flags: [
      {
        name: "approved-hash",
        type: "string",
        value: "TOKEN",
        description: "run: the approval token from plan show",
      },
      { name: "approval", type: "string", value: "TOKEN", description: "same as --approved-hash" },
      {
        name: "reusable",
        type: "boolean",
        description: "show: a token without expiry for a procedure (recorded in the audit)",
      },
      {
        name: "dismiss",
        type: "boolean",
        description: "recover: dismiss the run, restore nothing",
      },
      ELOG,
    ],
    build: planCommand,
    files: (cmd) => cmd.kind === "plan_show" || cmd.kind === "plan_run" ? [cmd.file] : [],
  },
  {
    name: "audit",
    usage: [["audit verify [FILE]", "check the audit trail's hash chain"]],
    flags: [],
    build(rest) {
      const [sub, file, ...extra] = rest;
      if (sub !== "verify" || extra.length) {
        throw new UsageError(
          "audit needs verify and at most one file, e.g. accel-agent audit verify",
        );
      }
      return { kind: "audit_verify", file };
    },
    files: (cmd) => cmd.kind === "audit_verify" && cmd.file ? [cmd.file] : [],
  },
  {
    name: "elog",
    usage: [
      ["elog list", "logbook drafts: pending, posted, skipped"],
      ["elog show DRAFT", "one draft's text"],
      ["elog post DRAFT…", "post saved drafts (exactly once; a draft id or file)"],
      ["elog skip DRAFT…", "skip drafts (recorded in the audit)"],
      [
        "elog shift [--from T] [--to T]",
        "draft a shift summary: logbook, alarms and plans since T (default -8h)",
      ],
    ],
    flags: [
      { name: "from", type: "string", value: "ISO|-8h", description: "shift: start (default -8h)" },
      { name: "to", type: "string", value: "ISO|now", description: "shift: end (default now)" },
      ELOG,
    ],
    notes: [
      "In a terminal, shift asks post / edit / skip; without one (and without --elog) the draft",
      "is kept for a later elog post.",
    ],
    build: elogCommand,
    files: elogFiles,
  },
  {
    name: "permissions",
    usage: [["permissions", "the deno run grant flags for the current config"]],
    flags: [],
    build(rest) {
      noPositionals("permissions", rest);
      return { kind: "permissions" };
    },
  },
  {
    name: "config",
    usage: [["config show", "the configuration in force, each value with the file that set it"]],
    flags: [],
    build(rest) {
      if (rest.length !== 1 || rest[0] !== "show") {
        throw new UsageError("config takes show, e.g. accel-agent config show");
      }
      return { kind: "config_show" };
    },
  },
  {
    name: "exec",
    usage: [["exec FILE|-", "run Python in the sandbox (no model needed)"]],
    flags: [{
      name: "timeout",
      type: "string",
      value: "SECONDS",
      description: "stop the run after this long",
      default: "[sandbox] timeout_s",
    }],
    build(rest, v) {
      if (rest.length !== 1) {
        throw new UsageError("exec needs one file of Python code, or - for stdin");
      }
      const timeout = str(v, "timeout");
      const timeoutS = timeout === undefined ? undefined : Number(timeout);
      if (timeoutS !== undefined && !(timeoutS > 0 && timeoutS <= 3600)) {
        throw new UsageError(`--timeout "${timeout}" must be a number of seconds from 0 to 3600`);
      }
      return { kind: "exec", file: rest[0] as string, ...(timeoutS ? { timeoutS } : {}) };
    },
    files: (cmd) => cmd.kind === "exec" && cmd.file !== "-" ? [cmd.file] : [],
  },
  {
    name: "scripts",
    usage: [
      ["scripts list [KEYWORD]", "the operator's Python scripts"],
      ["scripts run NAME [ARGS…]", "run one in the sandbox (-- before ARGS that start with -)"],
    ],
    flags: [],
    build(rest) {
      const [action, ...more] = rest;
      if (action === "list" && more.length <= 1) {
        return { kind: "scripts", action: "list", ...(more[0] ? { keyword: more[0] } : {}) };
      }
      if (action === "run" && more[0]) {
        return { kind: "scripts", action: "run", name: more[0], args: more.slice(1) };
      }
      throw new UsageError("scripts needs list [KEYWORD] or run NAME [ARGS…]");
    },
  },
  {
    name: "display",
    usage: [[
      "display [NAME [MACRO=VALUE…]]",
      "open a facility display (list them without NAME)",
    ]],
    flags: [],
    build(rest) {
      const [display, ...macros] = rest;
      return { kind: "display", ...(display !== undefined ? { name: display } : {}), macros };
    },
  },
  {
    name: "plot",
    usage: [
      ["plot DEVICE… [--from T] [--to T]", "a chart of archived series (SVG saved too)"],
      ["plot DEVICE… --live 10s [--every 1s]", "a chart of live values read for a while"],
      [
        "plot --scan FILE|HASH | --csv FILE",
        "a chart of a plan's scan, or of a work-directory CSV",
      ],
    ],
    flags: [
      {
        name: "from",
        type: "string",
        value: "ISO|-8h",
        description: "archive: start (default -24h)",
      },
      { name: "to", type: "string", value: "ISO|now", description: "archive: end" },
      {
        name: "live",
        type: "string",
        value: "DURATION",
        description: "read live for 10s, 500ms, 1m",
      },
      { name: "every", type: "string", value: "DURATION", description: "live: between reads" },
      { name: "scan", type: "string", value: "FILE|HASH", description: "a plan's recorded scan" },
      { name: "csv", type: "string", value: "FILE", description: "a CSV in the work directory" },
      {
        name: "column",
        type: "string",
        multiple: true,
        value: "NAME",
        description: "csv, scan: only this column (repeatable)",
      },
    ],
    build: (rest, v) => ({ kind: "plot", args: plotArgs(rest, v) }),
  },
  {
    name: "eval",
    usage: [[
      "eval [--repeat N] [--tasks SEL]",
      "graded tasks on the simulator (eval --help)",
    ]],
    flags: [],
    build() {
      // Reached only when an option eval does not know comes before it (see eval_args.ts).
      throw new UsageError(
        "give eval's options after it, e.g. accel-agent eval --profile sim-eval; see accel-agent eval --help",
      );
    },
  },
  {
    name: "help",
    usage: [["help [COMMAND]", "this help, or one command's"]],
    flags: [],
    build: (rest) => ({ kind: "help", ...(rest[0] ? { command: rest[0] } : {}) }),
  },
];

/** The entry of a command name, if there is one. */
export function commandSpec(name: string): CommandSpec<Command> | undefined {
  return COMMANDS.find((c) => c.name === name);
}
