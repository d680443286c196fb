/**
 * The no-LLM commands (`get`, `search`, `logs`): the same tools the model
 * uses, with the same validation, driven by the operator. `--json` prints the
 * tool's result object. Exit 0 only when everything asked for came back; 1 when
 * the service failed or any device of `get` or `logs archive` did. Names,
 * units, descriptions and log text come from facility services and are
 * shown through {@link untrusted}.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import type { Command } from "../args/args.ts";
import { CliError, Exit } from "../../app/exit.ts";
import {
  abortOnSignals,
  cancelledBy,
  type Io,
  SIGNAL_EXIT,
  type StopSignal,
} from "../../app/io.ts";
import { type Style, style } from "../term/style.ts";
import { type FitTable, fitTable, tableWidth } from "../term/fit_table.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { wrapText } from "../../util/text_wrap.ts";
import { type ToolResults, wholeResult } from "../../tools/results.ts";
import { renderSearch, type SearchOut } from "./search_render.ts";
import {
  FACILITY_FILE,
  facilityDigest,
  type Stamp,
  stampOf,
  writeTicket,
} from "./search_ticket.ts";
import { BUILTIN_SYNONYMS_URL, loadSynonyms } from "../../index/synonyms.ts";
import { lexiconDigest } from "../../index/digest.ts";

/** One line of a service's text, as a cell shows it. */
const one = (x: unknown): string => untrusted(String(x ?? ""));

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
    if (json) io.out(`${terminalJson(outcome.result)}\n`);
    throw new CliError(errorText(outcome.result).replace(/^\w+: /, ""), Exit.FAILURE);
  }
  // The operator's own command prints all it asked for, not the model's excerpt.
  const result = wholeResult(tool, outcome);
  if (!result) throw new CliError(`${tool} returned no result`, Exit.FAILURE);
  if (json) {
    io.out(`${terminalJson(result)}\n`);
  } else {
    const s = style(io.color);
    if ("readings" in result) renderGet(result, io, s);
    else if ("mode" in result) renderSearch(result, searchOut(io));
    else renderLogs(result, io, s);
  }
  // Only a search by words is answered from the cache next time: only it leaves a ticket.
  if ("mode" in result && result.mode === "informal") await leaveTicket(app, io);
  // A device that could not be read or summarised is a failure for scripts, even when
  // others came back: exit 1, with each device's reason on stderr (in the JSON under --json).
  const failures = failedDevices(result);
  if (failures.length) {
    if (!json) {
      for (const e of failures) io.err(`accel-agent: ${one(e.device)}: ${one(e.error)}\n`);
    }
    return Exit.FAILURE;
  }
  return Exit.OK;
}

type DirectTool = "get_parameter" | "search_device" | "read_log";

/** The devices a `get` or `logs archive` result holds an error for. */
function failedDevices(result: ToolResults[DirectTool]): { device: string; error: string }[] {
  const rows = "readings" in result
    ? result.errors ?? []
    : "source" in result && result.source === "archive"
    ? result.series.filter((x) => "error" in x)
    : [];
  return rows.map((e) => ({ device: e.device, error: String(e.error) }));
}

function toolCall(cmd: Direct): [DirectTool, Row] {
  switch (cmd.kind) {
    case "get":
      return ["get_parameter", { devices: cmd.devices }];
    case "search":
      return ["search_device", {
        pattern: cmd.pattern,
        mode: cmd.mode,
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

/** A table as wide as the terminal at most, cells wrapped between words. */
function table(head: string[], s: Style, width: number): FitTable {
  return fitTable(head, s, width);
}

function severity(sev: unknown, s: Style): string {
  const text = one(sev);
  if (text === "MAJOR" || text === "INVALID") return s.red(text);
  if (text === "MINOR") return s.yellow(text);
  return text;
}

function renderGet(result: ToolResults["get_parameter"], io: Io, s: Style): void {
  const t = table(
    ["Device", "Value", "Units", "Severity", "Status", "Time (UTC)"],
    s,
    tableWidth(io),
  );
  for (const r of result.readings) {
    const value = typeof r.value === "object" && r.value !== null
      ? terminalJson(r.value).replace(/\s+/g, "")
      : String(r.value);
    t.push([
      one(r.device),
      one(value),
      one(r.units),
      severity(r.severity, s),
      one(r.status),
      one(r.time),
    ]);
  }
  if (result.readings.length) io.out(`${t.toString()}\n`);
}

function renderLogs(result: ToolResults["read_log"], io: Io, s: Style): void {
  // On a terminal, every line is wrapped to its width between words (into a pipe, lines stay whole).
  const width = tableWidth(io);
  const wrapped = (text: string, indent = "") =>
    (width === Infinity ? text.split("\n") : wrapText(text, width - indent.length))
      .map((l) => `${indent}${l}`).join("\n");
  io.out(
    `${wrapped(s.dim(`${one(result.source)} from ${one(result.from)} to ${one(result.to)}`))}\n`,
  );
  if (result.source === "archive") {
    const t = table(["Device", "Points", "Min", "Max", "Mean", "Last", "Worst"], s, tableWidth(io));
    for (const x of result.series) {
      if ("error" in x) {
        t.push([one(x.device), { colSpan: 6, content: s.red(one(x.error)) }]);
        continue;
      }
      const last = x.last;
      t.push([
        one(`${x.device}${x.units ? ` (${x.units})` : ""}`),
        one(x.points),
        one(x.min),
        one(x.max),
        one(x.mean),
        last ? one(`${last.value} @ ${last.time}${last.since ? ` (set ${last.since})` : ""}`) : "",
        severity(x.worst_severity, s),
      ]);
    }
    io.out(`${t.toString()}\n`);
    return;
  }
  const entries = result.entries;
  if (!entries.length) return io.out("no entries\n");
  for (const e of entries) {
    const head = `${s.dim(one(e.time))} ${severity(e.severity, s)} ${s.bold(one(e.title))}`;
    const meta = one([e.author, e.logbook, e.status].filter(Boolean).join(" · "));
    io.out(`${wrapped(`${head}${meta ? s.dim(`  (${meta})`) : ""}`)}\n`);
    if (e.text && e.text !== e.title) {
      io.out(`${wrapped(untrusted(e.text, { multiline: true }), "    ")}\n`);
    }
  }
}

/**
 * After a search that loaded everything: what the next search with this
 * configuration needs to answer from the cached index alone.
 */
async function leaveTicket(app: App, io: Io): Promise<void> {
  const stats = await app.devices?.stats().catch(() => undefined);
  if (!stats?.cacheFile || stats.cacheBytes === undefined) return;
  const files = [decodeURIComponent(BUILTIN_SYNONYMS_URL.pathname)];
  if (stats.synonymsFile) files.push(stats.synonymsFile);
  const stamps: Stamp[] = [];
  for (const f of files) {
    const stamp = stampOf(f);
    if (stamp === undefined) return;
    stamps.push(stamp);
  }
  let synonyms;
  try {
    synonyms = await loadSynonyms(stats.synonymsFile);
  } catch {
    return;
  }
  await writeTicket({
    ...(app.loaded.path ? { config: app.loaded.path } : {}),
    configHash: app.loaded.hash,
    home: io.env("HOME") ?? io.cwd,
    stateDir: app.stateDir,
    source: stats.source,
    cacheFile: stats.cacheFile,
    refreshMs: stats.refreshMs,
    synonyms,
    lexiconDigest: lexiconDigest(synonyms),
    color: app.loaded.config.ui.color,
    stamps,
    ...(app.loaded.config.facility.adapter === "simulator" ? await facilityIdentity() : {}),
  });
}

/** The simulator's facility description, by digest and (when readable) by its file's stamp. */
async function facilityIdentity(): Promise<{ facility: string; facilityStamp?: Stamp }> {
  const stamp = stampOf(FACILITY_FILE);
  return { facility: await facilityDigest(), ...(stamp ? { facilityStamp: stamp } : {}) };
}

/** Where a search is printed: the terminal's width when stdout is one. */
export function searchOut(io: Io): SearchOut {
  return {
    color: io.color,
    out: (text) => io.out(text),
    err: (text) => io.err(text),
    columns: tableWidth(io),
  };
}
