/**
 * A shift summary since a time: the e-log's entries, the alarms and the
 * plans run, counted from the services and the audit log (the numbers), with
 * a model's prose only on top and marked as the model's. A source that
 * cannot be read is named in the summary, not guessed at.
 *
 * @module
 */
import type { ControlReader, LogEntry } from "../adapters/adapter.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { errorMessage } from "../util/errors.ts";
import { capped, code, fenced, inline, titleText } from "./text.ts";

/** Entries and runs listed by name in the text, at most. */
const LISTED = 40;
/** The largest audit day file read for a summary. */
const MAX_AUDIT_FILE = 64 * 1024 * 1024;

export interface ShiftFacts {
  kind: "shift";
  from: string;
  to: string;
  elog:
    | { count: number; byLevel: Record<string, number>; entries: ListedEntry[] }
    | { error: string };
  alarms:
    | { count: number; bySeverity: Record<string, number>; devices: [string, number][] }
    | { error: string };
  plans:
    | { ran: number; byOutcome: Record<string, number>; rejected: number; runs: ListedRun[] }
    | { error: string };
}

interface ListedEntry {
  time: string;
  title: string;
  author?: string;
  level?: string;
}

interface ListedRun {
  time: string;
  outcome: string;
  description: string;
  planHash: string;
}

/** Counts what happened in `[from, to)`. */
export async function shiftFacts(
  cs: ControlReader,
  auditFiles: string[],
  from: string,
  to: string,
  signal?: AbortSignal,
): Promise<ShiftFacts> {
  const [elog, alarms, plans] = await Promise.all([
    read(() => cs.logs({ source: "elog", from, to, limit: 10_000 }, signal)).then((r) =>
      "error" in r ? r : elogCounts(r.value)
    ),
    read(() => cs.logs({ source: "alarm", from, to, limit: 10_000 }, signal)).then((r) =>
      "error" in r ? r : alarmCounts(r.value)
    ),
    read(() => planCounts(auditFiles, from, to)).then((r) => "error" in r ? r : r.value),
  ]);
  return { kind: "shift", from, to, elog, alarms, plans };
}

async function read<T>(f: () => Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await f() };
  } catch (e) {
    return { error: errorMessage(e).split("\n")[0] ?? "" };
  }
}

function tally(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}

function elogCounts(entries: LogEntry[]) {
  const oldest = [...entries].sort((a, b) => (a.time < b.time ? -1 : 1));
  return {
    count: entries.length,
    byLevel: tally(entries.map((e) => e.status ?? "Info")),
    entries: oldest.slice(0, LISTED).map((e) => ({
      time: e.time,
      title: e.title,
      ...(e.author ? { author: e.author } : {}),
      ...(e.status ? { level: e.status } : {}),
    })),
  };
}

function alarmCounts(events: LogEntry[]) {
  const byDevice = tally(events.flatMap((e) => e.devices.slice(0, 1)));
  return {
    count: events.length,
    bySeverity: tally(events.map((e) => e.severity)),
    devices: Object.entries(byDevice).sort((a, b) => b[1] - a[1]).slice(0, 10),
  };
}

/** The plans whose outcome the audit recorded in the range, and the rejections. */
async function planCounts(files: string[], from: string, to: string) {
  const runs: ListedRun[] = [];
  let rejected = 0;
  for (const file of files) {
    const day = file.slice(-16, -6);
    if (day < from.slice(0, 10) || day > to.slice(0, 10)) continue;
    for (const line of (await readRegularText(file, MAX_AUDIT_FILE)).split("\n")) {
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(line);
      } catch {
        continue;
      }
      const time = String(e.time ?? "");
      if (!(time >= from && time < to)) continue;
      if (e.decision === "rejected") rejected++;
      const status = String(e.status ?? "");
      if (!["completed", "failed", "aborted", "refused"].includes(status)) continue;
      const plan = e.plan as { description?: unknown } | null;
      runs.push({
        time,
        outcome: status,
        description: String(plan?.description ?? ""),
        planHash: String(e.planHash ?? ""),
      });
    }
  }
  return {
    ran: runs.length,
    byOutcome: tally(runs.map((r) => r.outcome)),
    rejected,
    runs: runs.slice(0, LISTED),
  };
}

export function shiftTitle(f: ShiftFacts): string {
  return titleText(`Shift summary ${f.from.slice(0, 16)}Z to ${f.to.slice(0, 16)}Z`);
}

/** The summary's text: the numbers, then the model's prose (fenced, marked) when there is one. */
export function shiftBody(
  f: ShiftFacts,
  opts: { prose?: string; maxChars: number; summaryChars: number },
): string {
  const out = [`**Shift:** ${f.from} to ${f.to} (UTC)`, ""];
  const counts = (r: Record<string, number>) =>
    Object.entries(r).map(([k, n]) => `${inline(k, 40)} ${n}`).join(", ");
  if ("error" in f.elog) out.push(`**Logbook:** not read (${inline(f.elog.error, 300)})`, "");
  else {
    out.push(`**Logbook:** ${f.elog.count} entries (${counts(f.elog.byLevel) || "none"})`, "");
    for (const e of f.elog.entries) {
      out.push(
        `- ${e.time.slice(11, 16)} ${inline(e.title, 160)}${
          e.author ? ` (${inline(e.author, 60)})` : ""
        }`,
      );
    }
    if (f.elog.entries.length) out.push("");
  }
  if ("error" in f.alarms) out.push(`**Alarms:** not read (${inline(f.alarms.error, 300)})`, "");
  else {
    const most = f.alarms.devices.map(([d, n]) => `${code(d)} ${n}`).join(", ");
    out.push(
      `**Alarms:** ${f.alarms.count} events (${counts(f.alarms.bySeverity) || "none"})${
        most ? `; most: ${most}` : ""
      }`,
      "",
    );
  }
  if ("error" in f.plans) out.push(`**Plans:** not read (${inline(f.plans.error, 300)})`, "");
  else {
    out.push(
      `**Plans:** ${f.plans.ran} ran (${
        counts(f.plans.byOutcome) || "none"
      }), ${f.plans.rejected} rejected`,
      "",
    );
    for (const r of f.plans.runs) {
      out.push(
        `- ${r.time.slice(11, 16)} ${r.outcome}: ${inline(r.description, 200)} (plan ${
          code(r.planHash.slice(0, 12))
        })`,
      );
    }
  }
  const facts = capped(
    out.join("\n").trimEnd(),
    opts.maxChars - Math.min(opts.summaryChars, 2000) - 200,
  );
  if (!opts.prose?.trim() || opts.summaryChars === 0) return `${facts}\n`;
  return `${facts}\n\n---\n\n**Summary by the model** (its words, not checked against the services):\n\n${
    fenced(opts.prose, opts.summaryChars + 100)
  }\n`;
}
