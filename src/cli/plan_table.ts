/**
 * A plan as the operator sees it: every action with current → new (Δ),
 * reasons, the scan summary, the rollback, the estimated duration and the
 * hash the decision is bound to.
 *
 * @module
 */
import Table from "cli-table3";
import type { Value } from "../adapters/adapter.ts";
import type { Action } from "../plan/model.ts";
import type { PlannedChange, PreflightedPlan } from "../plan/preflight.ts";
import type { Style } from "./style.ts";
import { round6 } from "../util/misc.ts";

/** Widths of the columns before "Reason / detail", which takes what the terminal has left. */
const FIXED_COLUMNS = [6, 9, 26, 34];
/** The table's width when output is not a terminal (a file, a pipe). */
export const PLAN_TABLE_COLUMNS = 120;

/** The width to draw a plan in: the terminal's, or {@link PLAN_TABLE_COLUMNS} when not a terminal. */
export function planColumns(io: { stdoutIsTerminal: boolean; columns(): number }): number {
  return io.stdoutIsTerminal ? io.columns() : PLAN_TABLE_COLUMNS;
}

/** The plan table, at most `columns` wide (the reason column is kept 24–80 wide). */
export function renderPlan(p: PreflightedPlan, s: Style, columns = PLAN_TABLE_COLUMNS): string {
  const changes = new Map(p.changes.map((c) => [c.where, c]));
  // Each column's width includes one border; the table adds one more at its right.
  const fixed = FIXED_COLUMNS.reduce((a, b) => a + b + 1, 0) + 2;
  const reason = Math.min(80, Math.max(24, columns - fixed));
  const table = new Table({
    head: ["#", "Action", "Device", "Current → New (Δ)", "Reason / detail"].map((h) => s.bold(h)),
    style: { head: [], border: [] },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
    wordWrap: true,
    colWidths: [...FIXED_COLUMNS, reason],
  });
  const rows = (list: Action[], prefix: string, label: string) =>
    list.forEach((a, i) =>
      table.push(row(`${prefix}[${i}]`, label ? `${label} ${i + 1}` : String(i + 1), a, changes, s))
    );
  rows(p.plan.actions, "actions", "");
  rows(p.plan.rollback ?? [], "rollback", "rb");
  const lines = [s.bold(p.plan.description), table.toString()];
  const facts = [
    `about ${formatSeconds(p.estimatedSeconds)}`,
    ...(p.scanPoints ? [`${p.scanPoints} scan points`] : []),
    p.plan.rollback?.length ? "rollback given" : "on failure: originals restored",
    ...(p.plan.abortOnSeverity ? [`aborts at ${p.plan.abortOnSeverity}`] : []),
  ];
  lines.push(s.dim(`${facts.join(" · ")}\nplan hash ${p.hash}`));
  if (p.violations.length) {
    lines.push(s.red(`${p.violations.length} violation${p.violations.length > 1 ? "s" : ""}:`));
    for (const v of p.violations) lines.push(s.red(`  ${v.where}: ${v.message}`));
  }
  return `${lines.join("\n")}\n`;
}

function row(
  where: string,
  n: string,
  a: Action,
  changes: Map<string, PlannedChange>,
  s: Style,
): string[] {
  const c = changes.get(where);
  switch (a.type) {
    case "read":
      return [n, "read", list(a.devices), "", a.label ?? ""];
    case "wait":
      return [n, "wait", "", `${a.seconds} s`, a.reason ?? ""];
    case "write":
      return [
        n,
        s.yellow("write"),
        a.device,
        change(c?.from ?? null, a.value, c?.delta, c?.units),
        a.reason,
      ];
    case "scan":
      return [
        n,
        s.yellow("scan"),
        a.writeDevice,
        `${show(c?.from ?? null)} → ${a.start} … ${a.stop}${c?.units ? ` ${c.units}` : ""}`,
        `${a.steps} points, dwell ${a.dwellSeconds} s; reads ${list(a.readDevices)}`,
      ];
  }
}

function change(
  from: Value | null,
  to: number | string,
  delta: number | undefined,
  units = "",
): string {
  const u = units ? ` ${units}` : "";
  const d = delta === undefined ? "" : ` (Δ ${delta >= 0 ? "+" : ""}${round6(delta)})`;
  return `${show(from)} → ${to}${u}${d}`;
}

function list(devices: string[]): string {
  return devices.length <= 3
    ? devices.join(", ")
    : `${devices.slice(0, 3).join(", ")} +${devices.length - 3} more`;
}

function show(v: Value | null): string {
  if (v === null) return "?";
  if (typeof v === "number") return String(round6(v));
  return Array.isArray(v) ? "[waveform]" : String(v);
}

export function formatSeconds(s: number): string {
  return s < 90 ? `${Math.round(s * 10) / 10} s` : `${Math.round(s / 6) / 10} min`;
}
