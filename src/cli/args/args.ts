/**
 * Command-line parsing (node:util parseArgs). Produces a typed command or a
 * {@link UsageError} with one line saying what is wrong and what to do.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { UsageError } from "../../app/exit.ts";
import { errorMessage } from "../../util/errors.ts";

export type Command =
  | { kind: "repl" }
  | { kind: "ask"; question?: string }
  | { kind: "get"; devices: string[] }
  | {
    kind: "search";
    pattern: string;
    /** Forced reading of the text (`--pattern`, `--words`); auto otherwise. */
    mode: "auto" | "pattern" | "informal";
    subsystem?: string;
    writable?: boolean;
    limit: number;
    offset: number;
  }
  | {
    kind: "logs";
    source: "elog" | "alarm" | "archive";
    from?: string;
    to?: string;
    devices: string[];
    text?: string;
    severity?: string;
    limit: number;
  }
  | { kind: "plan_show"; file: string; reusable: boolean }
  | { kind: "plan_run"; file: string; approvedHash?: string }
  | { kind: "plan_recover"; run?: string; dismiss: boolean }
  | { kind: "audit_verify"; file?: string }
  | { kind: "permissions" }
  | { kind: "index"; action: "stats" | "refresh" }
  | { kind: "help" }
  | { kind: "exec"; file: string; timeoutS?: number }
  | { kind: "scripts"; action: "list"; keyword?: string }
  | { kind: "scripts"; action: "run"; name: string; args: string[] }
  | { kind: "display"; name?: string; macros: string[] }
  | { kind: "plot"; args: Record<string, unknown> };

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

const OPTIONS = {
  config: { type: "string", short: "c" },
  model: { type: "string", short: "m" },
  json: { type: "boolean" },
  "stream-json": { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  from: { type: "string" },
  to: { type: "string" },
  device: { type: "string", short: "d", multiple: true },
  text: { type: "string" },
  severity: { type: "string" },
  subsystem: { type: "string" },
  writable: { type: "boolean" },
  "read-only": { type: "boolean" },
  pattern: { type: "boolean" },
  words: { type: "boolean" },
  limit: { type: "string" },
  offset: { type: "string" },
  "approved-hash": { type: "string" },
  approval: { type: "string" },
  reusable: { type: "boolean" },
  dismiss: { type: "boolean" },
  timeout: { type: "string" },
  resume: { type: "string" },
  profile: { type: "string" },
  live: { type: "string" },
  every: { type: "string" },
  scan: { type: "string" },
  csv: { type: "string" },
  column: { type: "string", multiple: true },
} as const;

type OptionName = keyof typeof OPTIONS;

/** Options each command accepts beyond the global ones. */
const COMMAND_OPTIONS: Record<string, readonly OptionName[]> = {
  start: ["resume"],
  ask: ["stream-json", "resume"],
  get: [],
  search: ["subsystem", "writable", "read-only", "pattern", "words", "limit", "offset"],
  index: [],
  logs: ["from", "to", "device", "text", "severity", "limit"],
  plan: ["approved-hash", "approval", "reusable", "dismiss"],
  audit: [],
  help: [],
  permissions: [],
  exec: ["timeout"],
  scripts: [],
  display: [],
  plot: ["from", "to", "live", "every", "scan", "csv", "column"],
};
const GLOBAL: readonly OptionName[] = ["config", "model", "json", "no-color", "help", "profile"];

export const USAGE = `accel-agent — a terminal assistant for accelerator control rooms

Usage:
  accel-agent [start]                      interactive session (REPL) on the configured machine
  accel-agent ask [QUESTION]               one answer; the question from stdin when not given
  accel-agent get DEVICE…                  live values (no model needed)
  accel-agent search PATTERN|WORDS…        device names by * ? pattern, /regex/ or plain words, ranked (no model needed)
  accel-agent index [stats|refresh]        the device index: what it holds; rebuild it and its cache
  accel-agent logs elog|alarm|archive      history in a time range (no model needed)
  accel-agent plan show PLAN [--reusable]  preflight a plan (file or saved ID); issues an approval token
  accel-agent plan run PLAN                preflight, approve in the terminal, execute, audit
  accel-agent plan run PLAN --approved-hash TOKEN   execute without a prompt with a token from plan show
  accel-agent plan recover [RUN] [--dismiss]  plans that did not finish; restore (or dismiss) one
  accel-agent audit verify [FILE]          check the audit trail's hash chain
  accel-agent permissions                  the deno run grant flags for the current config
  accel-agent exec FILE|-                  run Python in the sandbox (no model needed)
  accel-agent scripts list [KEYWORD]       the operator's Python scripts
  accel-agent scripts run NAME [ARGS…]     run one in the sandbox (-- before ARGS that start with -)
  accel-agent display [NAME [MACRO=VALUE…]]  open a facility display (list them without NAME)
  accel-agent plot DEVICE… [--from T] [--to T]  a chart of archived series (SVG saved too)
  accel-agent plot DEVICE… --live 10s [--every 1s]  a chart of live values read for a while
  accel-agent plot --scan FILE|HASH | --csv FILE  a chart of a plan's scan, or of a work-directory CSV
  accel-agent eval [--repeat N] [--tasks SEL]  graded tasks on the simulator (eval --help)

Options:
  -c, --config FILE     configuration file (default configs/default.toml; env ACCEL_AGENT_CONFIG)
  -m, --model NAME      named model from [llm.models] (env ACCEL_AGENT_MODEL)
      --json            one JSON object on stdout (ask, get, search, index, logs, display, plot)
      --stream-json     ask: one JSON line per event, then the result
      --no-color        plain output (also NO_COLOR=1)
      --resume [ID]     start, ask: continue a saved session (default: the newest)
      --profile NAME    observer | operator | sim-eval (default [profile] name, operator)
  search:  --subsystem NAME  --writable | --read-only  --limit N  --offset N
           --pattern | --words (read the text as a pattern, or as words; default: decide by the text)
  logs:    --from ISO|-8h  --to ISO|now  --device D (repeatable; required for archive)
           --text WORDS  --severity MINOR|MAJOR|INVALID  --limit N
  plot:    --from/--to (archive, default the last 24 h) | --live DURATION --every DURATION
           (10s, 500ms, 1m) | --scan FILE|PLAN-HASH | --csv FILE [--column NAME]…
  exec:    --timeout SECONDS (default [sandbox] timeout_s)
  plan:    run --approved-hash TOKEN (or --approval TOKEN), from plan show;
           show --reusable: a token without expiry for a procedure (recorded in the audit)
  -V, --version         print the version

Exit codes: 0 answered, 1 runtime failure, 2 usage or configuration error,
3 approval required but no terminal, 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.`;

/** Parses arguments; `stdinIsTerminal` decides what no command means. */
export function parseInvocation(args: string[], stdinIsTerminal: boolean): Invocation {
  let parsed;
  try {
    parsed = parseArgs({
      args: bareResume(joinRelativeTimes(args)),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new UsageError(`${errorMessage(e).split("\n")[0]}; see accel-agent --help`);
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  const name = first ?? (stdinIsTerminal ? "start" : "ask");
  if (!(name in COMMAND_OPTIONS)) {
    throw new UsageError(
      `unknown command "${name}"; commands: start, ask, get, search, index, logs, plan, audit, permissions, exec, scripts, display, plot, eval (see --help)`,
    );
  }
  const allowed = new Set<string>([...GLOBAL, ...(COMMAND_OPTIONS[name] ?? [])]);
  for (const key of Object.keys(values)) {
    if (!allowed.has(key)) {
      throw new UsageError(`--${key} is not an option of "${name}"; see accel-agent --help`);
    }
  }
  const base = {
    config: values.config,
    model: values.model,
    json: values.json ?? false,
    streamJson: values["stream-json"] ?? false,
    noColor: values["no-color"] ?? false,
    ...(values.resume !== undefined ? { resume: values.resume } : {}),
    ...(values.profile !== undefined ? { profile: values.profile } : {}),
  };
  if (values.help || name === "help") return { ...base, command: { kind: "help" } };
  if (base.json && base.streamJson) {
    throw new UsageError("--json and --stream-json exclude each other; pick one");
  }
  return { ...base, command: toCommand(name, rest, values) };
}

type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>["values"];

function toCommand(name: string, rest: string[], v: Values): Command {
  switch (name) {
    case "start":
      noPositionals(name, rest);
      return { kind: "repl" };
    case "permissions":
      noPositionals(name, rest);
      return { kind: "permissions" };
    case "ask":
      return { kind: "ask", question: rest.length ? rest.join(" ") : undefined };
    case "exec":
    case "scripts":
      return sandboxCommand(name, rest, v.timeout);
    case "plot":
      return { kind: "plot", args: plotArgs(rest, v) };
    case "display": {
      const [display, ...macros] = rest;
      return { kind: "display", ...(display !== undefined ? { name: display } : {}), macros };
    }
    case "get":
      if (!rest.length) {
        throw new UsageError(
          "get needs at least one device name, e.g. accel-agent get LINAC:BPM:01:X",
        );
      }
      return { kind: "get", devices: rest };
    case "index": {
      const action = rest[0] ?? "stats";
      if (rest.length > 1 || (action !== "stats" && action !== "refresh")) {
        throw new UsageError("index takes stats or refresh, e.g. accel-agent index refresh");
      }
      return { kind: "index", action };
    }
    case "search": {
      const text = rest.join(" ").trim();
      if (text === "") {
        throw new UsageError(
          `search needs a pattern or words, e.g. accel-agent search "LINAC:BPM:*:X" (quote wildcards) or accel-agent search ion pump pressure cell 4`,
        );
      }
      if (v.writable && v["read-only"]) {
        throw new UsageError("--writable and --read-only exclude each other");
      }
      if (v.pattern && v.words) throw new UsageError("--pattern and --words exclude each other");
      return {
        kind: "search",
        pattern: text,
        mode: v.pattern ? "pattern" : v.words ? "informal" : "auto",
        subsystem: v.subsystem,
        writable: v.writable ? true : v["read-only"] ? false : undefined,
        limit: intOption("limit", v.limit, 50, 1, 10_000),
        offset: intOption("offset", v.offset, 0, 0, Number.MAX_SAFE_INTEGER),
      };
    }
    case "logs": {
      const source = rest[0];
      if (rest.length !== 1 || (source !== "elog" && source !== "alarm" && source !== "archive")) {
        throw new UsageError(
          "logs needs one source: elog, alarm or archive, e.g. accel-agent logs alarm --from -8h",
        );
      }
      if (source === "archive" && !v.device?.length) {
        throw new UsageError("logs archive needs --device NAME (repeatable)");
      }
      const severity = v.severity?.toUpperCase();
      if (severity !== undefined && !["NONE", "MINOR", "MAJOR", "INVALID"].includes(severity)) {
        throw new UsageError(
          `--severity "${v.severity}" is not a severity; use MINOR, MAJOR or INVALID`,
        );
      }
      return {
        kind: "logs",
        source,
        from: v.from,
        to: v.to,
        devices: v.device ?? [],
        text: v.text,
        severity,
        limit: intOption("limit", v.limit, 50, 1, 10_000),
      };
    }
    case "plan": {
      const [sub, file, ...extra] = rest;
      if (sub === "recover") {
        if (extra.length) throw new UsageError("plan recover takes at most one run id");
        if (v.dismiss && !file) {
          throw new UsageError(
            "--dismiss needs the run id, e.g. accel-agent plan recover 3f2a… --dismiss",
          );
        }
        return { kind: "plan_recover", run: file, dismiss: v.dismiss ?? false };
      }
      if (v.dismiss) throw new UsageError("--dismiss goes with plan recover");
      if ((sub !== "show" && sub !== "run") || !file || extra.length) {
        throw new UsageError(
          "plan needs show, run or recover and one file or saved plan ID, e.g. accel-agent plan show bump.toml",
        );
      }
      const token = v["approved-hash"] ?? v.approval;
      if (v["approved-hash"] !== undefined && v.approval !== undefined) {
        throw new UsageError("give the approval token once: --approved-hash or --approval");
      }
      if (sub === "show" && token !== undefined) {
        throw new UsageError("--approved-hash goes with plan run, not plan show");
      }
      if (sub === "run" && v.reusable) {
        throw new UsageError("--reusable goes with plan show, which issues the token");
      }
      return sub === "show"
        ? { kind: "plan_show", file, reusable: v.reusable ?? false }
        : { kind: "plan_run", file, approvedHash: token };
    }
    case "audit": {
      const [sub, file, ...extra] = rest;
      if (sub !== "verify" || extra.length) {
        throw new UsageError(
          "audit needs verify and at most one file, e.g. accel-agent audit verify",
        );
      }
      return { kind: "audit_verify", file };
    }
  }
  throw new UsageError(`unknown command "${name}"`);
}

/** The `plot` tool's arguments from the command line: one source, its options only. */
function plotArgs(devices: string[], v: Values): Record<string, unknown> {
  const sources = [v.live !== undefined, v.scan !== undefined, v.csv !== undefined];
  if (sources.filter(Boolean).length > 1) {
    throw new UsageError("plot takes one source: devices (archive), --live, --scan or --csv");
  }
  const timeRange = v.from !== undefined || v.to !== undefined;
  if (v.scan !== undefined || v.csv !== undefined) {
    if (devices.length || timeRange || v.live !== undefined || v.every !== undefined) {
      throw new UsageError("--scan and --csv take no devices, --from, --to, --live or --every");
    }
    if (v.column && v.csv === undefined) throw new UsageError("--column goes with --csv");
    return v.scan !== undefined
      ? { source: "scan", scan: v.scan }
      : { source: "csv", file: v.csv, ...(v.column ? { columns: v.column } : {}) };
  }
  if (!devices.length) {
    throw new UsageError(
      "plot needs devices, --scan or --csv, e.g. accel-agent plot RING:DCCT:CURRENT --from -8h",
    );
  }
  if (v.column) throw new UsageError("--column goes with --csv");
  if (v.live === undefined) {
    if (v.every !== undefined) throw new UsageError("--every goes with --live");
    return {
      source: "archive",
      devices,
      ...(v.from ? { from: v.from } : {}),
      ...(v.to ? { to: v.to } : {}),
    };
  }
  if (timeRange) throw new UsageError("--live reads now; --from and --to go with archived series");
  const seconds = duration("live", v.live);
  const every = v.every === undefined ? undefined : duration("every", v.every);
  if (!(seconds > 0 && seconds <= 50)) {
    throw new UsageError("--live is more than 0 s and at most 50 s");
  }
  if (every !== undefined && !(every >= 0.1 && every <= seconds)) {
    throw new UsageError("--every is at least 100ms and at most the --live duration");
  }
  return { source: "live", devices, seconds, ...(every !== undefined ? { every } : {}) };
}

/** `10s`, `500ms`, `2m` or a number of seconds, in seconds. */
function duration(name: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(raw.trim());
  if (!m) throw new UsageError(`--${name} "${raw}" is not a duration; use e.g. 10s, 500ms or 1m`);
  const n = Number(m[1]);
  return m[2] === "ms" ? n / 1000 : m[2] === "m" ? n * 60 : n;
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
      (next === undefined || next.startsWith("-") || next in COMMAND_OPTIONS ||
        !/^[\w-]+$/.test(next));
    return bare ? "--resume=" : a;
  });
}

function noPositionals(name: string, rest: string[]): void {
  if (rest.length) throw new UsageError(`${name} takes no arguments, got "${rest.join(" ")}"`);
}

function intOption(
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

function sandboxCommand(name: "exec" | "scripts", rest: string[], timeout?: string): Command {
  if (name === "exec") {
    if (rest.length !== 1) {
      throw new UsageError("exec needs one file of Python code, or - for stdin");
    }
    const timeoutS = timeout === undefined ? undefined : Number(timeout);
    if (timeoutS !== undefined && !(timeoutS > 0 && timeoutS <= 3600)) {
      throw new UsageError(`--timeout "${timeout}" must be a number of seconds from 0 to 3600`);
    }
    return { kind: "exec", file: rest[0] as string, ...(timeoutS ? { timeoutS } : {}) };
  }
  const [action, ...more] = rest;
  if (action === "list" && more.length <= 1) {
    return { kind: "scripts", action: "list", ...(more[0] ? { keyword: more[0] } : {}) };
  }
  if (action === "run" && more[0]) {
    return { kind: "scripts", action: "run", name: more[0], args: more.slice(1) };
  }
  throw new UsageError("scripts needs list [KEYWORD] or run NAME [ARGS…]");
}
