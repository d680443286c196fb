/**
 * A plan's logbook entry as CommonMark: outcome, who and when, the
 * operator's question, the plan, a table of every device written (before →
 * written → after, what checked it, whether it was put back), the reasons,
 * scans with their files, errors, and the plan hash, run and audit ids; the
 * model's summary last, fenced and marked as the model's. Every outside
 * string goes through `text.ts`.
 *
 * @module
 */
import { capped, code, fenced, inline, titleText, valueCell } from "./text.ts";
import type { PlanFacts, WrittenRow } from "./plan_facts.ts";

/** Rows of the devices table and items of each list, at most. */
export const MAX_ROWS = 200;

/** What a draft adds to the facts: the question and the model's summary. */
export interface Annotations {
  question?: string;
  modelSummary?: string;
  /** Where the draft's text stops (characters). */
  maxChars: number;
  /** The model's summary is cut to this (the caller cuts it, saying how much was left out). */
  summaryChars: number;
  /** Who ran it: operator and host. */
  operator: string;
  host: string;
  /** The scan files and plots sent with the entry (their names are listed). */
  attachments: string[];
}

/** The entry's title: the outcome and the plan's description. */
export function planTitle(f: PlanFacts): string {
  return titleText(`Plan ${outcomeWord(f)}: ${f.description}`);
}

function outcomeWord(f: PlanFacts): string {
  if (f.outcome === "aborted") {
    return f.abortedBy === "alarm" ? "aborted by an alarm" : "aborted by the operator";
  }
  return f.outcome;
}

/** The entry's text. */
export function planBody(f: PlanFacts, a: Annotations): string {
  // The facts' share of the cap; never so small that the table cannot start.
  const budget = Math.max(4000, a.maxChars - Math.min(a.summaryChars, 2000) - 200);
  const head = [`**Outcome:** ${outcomeLine(f)}`, ""];
  head.push(
    `**Run by:** ${inline(a.operator, 100)} on ${inline(a.host, 100)}, approved by ${
      inline(f.decidedBy, 100)
    } (${f.decision}), ${f.startedAt} to ${f.finishedAt}`,
    "",
  );
  if (a.question) head.push(`**Question:** ${inline(a.question, 1000)}`, "");
  head.push(`**Plan:** ${inline(f.description, 1000)}`);
  const out: string[] = [];
  const reasons = f.reasons.map((r) =>
    `- ${code(r.device)} = ${valueCell(r.value)}: ${inline(r.reason, 300)}`
  );
  section(out, "Reasons", reasons);
  section(out, "Scans", f.scans.map((s) => scanLine(s, f, a.attachments)));
  section(out, "Rollback", f.rollback.map((x) => `- ${inline(x, 300)}`));
  section(out, "Errors", f.errors.map((x) => `- ${inline(x, 500)}`));
  if (a.attachments.length) {
    section(out, "Attached", a.attachments.map((p) => `- ${code(baseName(p))}`));
  }
  const foot = `Plan hash ${code(f.planHash)} · run ${code(f.run)}\n\nAudit records: ${
    f.auditIds.map((id) => code(id)).join(", ") || "none"
  }${f.recorded ? "" : " (the outcome is not in the audit log: it could not be written)"}`;
  // Cut between parts, never inside the table: it is checked against the audit whole.
  const top = capped(head.join("\n"), Math.floor(budget / 4));
  const table = tableText(f.writes, budget - top.length - foot.length - 200);
  const rest = out.join("\n").trim();
  const middle = rest
    ? `${capped(rest, Math.max(200, budget - top.length - table.length - foot.length))}\n\n`
    : "";
  const facts = `${top}\n\n${table}\n\n${middle}${foot}`;
  if (!a.modelSummary?.trim() || a.summaryChars === 0) return `${facts}\n`;
  return `${facts}\n\n---\n\n**Summary by the model** (its words, not checked against the machine):\n\n${
    fenced(a.modelSummary, a.summaryChars + 100)
  }\n`;
}

/** The devices table with as many rows as fit in `max` characters (at least its header). */
function tableText(rows: WrittenRow[], max: number): string {
  let limit = Math.min(rows.length, MAX_ROWS);
  let text = writesTable(rows, limit).join("\n").trim();
  while (limit > 0 && text.length > max) {
    limit = Math.max(0, Math.min(limit - 1, Math.floor(limit * max / text.length)));
    text = writesTable(rows, limit).join("\n").trim();
  }
  return text;
}

function outcomeLine(f: PlanFacts): string {
  const n = f.writes.length;
  const devices = `${n} device${n === 1 ? "" : "s"} written`;
  const restored = f.writes.filter((w) => w.restored === "restored").length;
  const failed = f.writes.filter((w) => w.restored === "restore failed").length;
  const put = [
    restored ? `${restored} restored to ${restored === 1 ? "its" : "their"} original` : "",
    failed ? `${failed} NOT restored` : "",
  ].filter(Boolean).join(", ");
  const first = f.errors[0] ? `: ${inline(f.errors[0], 300)}` : "";
  switch (f.outcome) {
    case "completed":
      return `completed, ${devices}`;
    case "failed":
      return `failed${first}; ${devices}${put ? `, ${put}` : ""}`;
    case "aborted":
      return `${outcomeWord(f)}${first}; ${devices}${put ? `, ${put}` : ""}`;
    case "refused":
      return `refused${first}`;
  }
}

/**
 * The devices table: a row per device written (the first `limit`), a line
 * saying how many more there are, then an empty line.
 */
export function writesTable(rows: WrittenRow[], limit = MAX_ROWS): string[] {
  if (!rows.length) return ["No device was written.", ""];
  const out = [
    "| Device | Before | Written | After | Checked by | Put back |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows.slice(0, limit)) {
    const by = r.check === "confirmed"
      ? code(r.readbackDevice ?? r.device)
      : r.check === "accepted"
      ? "setpoint only (no readback device)"
      : `not confirmed${r.note ? `: ${inline(r.note, 200)}` : ""}`;
    const back = r.restored === "no"
      ? "no"
      : r.restored === "rollback"
      ? "by the rollback"
      : r.restored === "restored"
      ? "restored to the original"
      : `restore FAILED${r.note ? `: ${inline(r.note, 200)}` : ""}`;
    out.push(
      `| ${code(r.device)} | ${valueCell(r.before)} | ${valueCell(r.written)} | ${
        valueCell(r.after)
      } | ${by} | ${back} |`,
    );
  }
  if (rows.length > limit) {
    out.push("", `… and ${rows.length - limit} more devices: see the audit records below.`);
  }
  out.push("");
  return out;
}

function scanLine(s: PlanFacts["scans"][number], f: PlanFacts, attached: string[]): string {
  const prefix = `scan-${f.planHash.slice(0, 12)}-${s.index}-`;
  const file = f.csvFiles.find((p) => baseName(p).startsWith(prefix));
  return `- ${code(s.device)} from ${s.start} to ${s.stop} in ${s.steps} points, reading ${
    s.readDevices.slice(0, 20).map((d) => code(d)).join(", ")
  }, dwell ${s.dwellSeconds} s${s.completed ? "" : " (stopped before its end)"}${
    file ? `; data ${code(baseName(file))}${attached.includes(file) ? " (attached)" : ""}` : ""
  }`;
}

function section(out: string[], title: string, items: string[]): void {
  if (!items.length) return;
  out.push(`**${title}:**`, "");
  out.push(...items.slice(0, MAX_ROWS));
  if (items.length > MAX_ROWS) out.push(`- … and ${items.length - MAX_ROWS} more`);
  out.push("");
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
