/**
 * The no-LLM commands (`get`, `search`, `logs`): the same tools the model
 * uses, with the same validation, driven by the operator. `--json` prints the
 * tool's result object. Exit 0 only when everything asked for came back; 1 when
 * the service failed or any device of `get` or `logs archive` did.
 *
 * @module
 */
import Table from "cli-table3";
import type { App } from "./app.ts";
import type { Command } from "./args.ts";
import { CliError, Exit } from "./exit.ts";
import { abortOnSignals, cancelledBy, type Io, SIGNAL_EXIT, type StopSignal } from "./io.ts";
import { type Style, style } from "./style.ts";

type Direct = Extract<Command, { kind: "get" | "search" | "logs" }>;
type Row = Record<string, unknown>;

export async function runDirect(app: App, cmd: Direct, json: boolean, io: Io): Promise<number> {
  const [tool, args] = toolCall(cmd);
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const outcome = await (async () => {
    // Awaited inside, so the listeners stay until the call ends (not only until it starts).
    using stop = abortOnSignals(controller, cancelledBy);
    try {
      return await app.tools.execute(tool, JSON.stringify(args), controller.signal);
    } finally {
      stoppedBy = stop.received;
    }
  })();
  if (stoppedBy) {
    const why = controller.signal.reason instanceof Error ? controller.signal.reason.message : "";
    throw new CliError(why || cancelledBy(stoppedBy), SIGNAL_EXIT[stoppedBy]);
  }
  if (!outcome.ok) {
    if (json) io.out(`${JSON.stringify(outcome.result, null, 2)}\n`);
    throw new CliError(errorText(outcome.result).replace(/^\w+: /, ""), Exit.FAILURE);
  }
  // The operator's own command prints all it asked for, not the model's excerpt.
  const result = (outcome.fullResult ?? outcome.result) as Row;
  if (json) {
    io.out(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    const s = style(io.color);
    if (cmd.kind === "get") renderGet(result, io, s);
    else if (cmd.kind === "search") renderSearch(result, io, s);
    else renderLogs(result, io, s);
  }
  // A device that could not be read or summarised is a failure for scripts, even when
  // others came back: exit 1, with each device's reason on stderr (in the JSON under --json).
  const failures = failedDevices(cmd, result);
  if (failures.length) {
    if (!json) { for (const e of failures) io.err(`accel-agent: ${e.device}: ${e.error}\n`); }
    return Exit.FAILURE;
  }
  return Exit.OK;
}

/** The devices a `get` or `logs archive` result holds an error for. */
function failedDevices(cmd: Direct, result: Row): { device: string; error: string }[] {
  const rows = cmd.kind === "get"
    ? result.errors
    : cmd.kind === "logs" && result.source === "archive"
    ? (result.series as Row[] | undefined)?.filter((x) => typeof x.error === "string")
    : undefined;
  if (!Array.isArray(rows)) return [];
  return (rows as Row[]).map((e) => ({ device: String(e.device), error: String(e.error) }));
}

function toolCall(cmd: Direct): [string, Row] {
  switch (cmd.kind) {
    case "get":
      return ["get_parameter", { devices: cmd.devices }];
    case "search":
      return ["search_device", {
        pattern: cmd.pattern,
        subsystem: cmd.subsystem,
        writable: cmd.writable,
        limit: Math.min(cmd.limit, 200),
        offset: cmd.offset,
      }];
    case "logs":
      return ["read_log", {
        source: cmd.source,
        from: cmd.from,
        to: cmd.to,
        devices: cmd.devices.length ? cmd.devices : undefined,
        text: cmd.text,
        min_severity: cmd.severity,
        limit: Math.min(cmd.limit, 500),
      }];
  }
}

function errorText(result: unknown): string {
  const e = (result as Row | null)?.error;
  return typeof e === "string" ? e : "the command failed";
}

function table(head: string[], s: Style): Table.Table {
  return new Table({
    head: head.map((h) => s.bold(h)),
    style: { head: [], border: [] },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
    wordWrap: true,
  });
}

function severity(sev: unknown, s: Style): string {
  const text = String(sev ?? "");
  if (text === "MAJOR" || text === "INVALID") return s.red(text);
  if (text === "MINOR") return s.yellow(text);
  return text;
}

function renderGet(result: Row, io: Io, s: Style): void {
  const t = table(["Device", "Value", "Units", "Severity", "Status", "Time (UTC)"], s);
  for (const r of (result.readings ?? []) as Row[]) {
    const value = typeof r.value === "object" && r.value !== null
      ? JSON.stringify(r.value)
      : String(r.value);
    t.push([
      String(r.device),
      value,
      String(r.units ?? ""),
      severity(r.severity, s),
      String(r.status ?? ""),
      String(r.time),
    ]);
  }
  if ((result.readings as Row[] | undefined)?.length) io.out(`${t.toString()}\n`);
}

function renderSearch(result: Row, io: Io, s: Style): void {
  const devices = (result.devices ?? []) as Row[];
  const t = table(["Device", "Units", "Writable", "Description"], s);
  for (const d of devices) {
    t.push([
      String(d.name),
      String(d.units ?? ""),
      d.writable ? "yes" : "",
      String(d.description ?? ""),
    ]);
  }
  if (devices.length) io.out(`${t.toString()}\n`);
  const offset = Number(result.offset ?? 0);
  const total = Number(result.total ?? 0);
  io.out(
    s.dim(
      devices.length
        ? `${offset + 1}–${offset + devices.length} of ${total}${
          result.next_offset !== undefined ? ` (next page: --offset ${result.next_offset})` : ""
        }\n`
        : `no devices match (${total} in all)\n`,
    ),
  );
  if (typeof result.note === "string") io.err(`accel-agent: ${result.note}\n`);
}

function renderLogs(result: Row, io: Io, s: Style): void {
  io.out(s.dim(`${result.source} from ${result.from} to ${result.to}\n`));
  if (result.source === "archive") {
    const t = table(["Device", "Points", "Min", "Max", "Mean", "Last", "Worst"], s);
    for (const x of (result.series ?? []) as Row[]) {
      if (typeof x.error === "string") {
        t.push([String(x.device), { colSpan: 6, content: s.red(x.error) }]);
        continue;
      }
      const last = x.last as Row | undefined;
      t.push([
        `${x.device}${x.units ? ` (${x.units})` : ""}`,
        String(x.points),
        String(x.min ?? ""),
        String(x.max ?? ""),
        String(x.mean ?? ""),
        last ? `${last.value} @ ${last.time}${last.since ? ` (set ${last.since})` : ""}` : "",
        severity(x.worst_severity, s),
      ]);
    }
    io.out(`${t.toString()}\n`);
    return;
  }
  const entries = (result.entries ?? []) as Row[];
  if (!entries.length) return io.out("no entries\n");
  for (const e of entries) {
    const head = `${s.dim(String(e.time))} ${severity(e.severity, s)} ${s.bold(String(e.title))}`;
    const meta = [e.author, e.logbook, e.status].filter(Boolean).join(" · ");
    io.out(`${head}${meta ? s.dim(`  (${meta})`) : ""}\n`);
    if (e.text && e.text !== e.title) io.out(`    ${String(e.text).replaceAll("\n", "\n    ")}\n`);
  }
}
