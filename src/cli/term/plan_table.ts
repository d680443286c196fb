/**
 * A plan as the operator sees it: every action with current → new (Δ),
 * reasons, the device whose reading will confirm each write or that none
 * will, the scan summary, the rollback, the estimated duration and the
 * hash the decision is bound to. Every text of the plan and of the facility
 * (names, reasons, units, values, violations) is shown through
 * {@link untrusted}, one line per cell, before it is styled.
 *
 * @module
 */
import Table from "cli-table3";
import type { Value } from "../../adapters/adapter.ts";
import type { Action } from "../../plan_model/plan.ts";
import {
  type PlannedChange,
  type PreflightedPlan,
  violationText,
} from "../../plan_model/preflighted.ts";
import { partnerText } from "../../plan/readback.ts";
import type { Style } from "./style.ts";
import { round6 } from "../../util/misc.ts";
import { untrusted } from "../../util/untrusted_text.ts";

/** The table's width when output is not a terminal (a file, a pipe). */
export const PLAN_TABLE_COLUMNS = 120;
/** The "#" and "Action" columns; a table of five columns has six borders. */
const NUM = 6, ACTION = 9, BORDERS = 6;
/** Device names longer than this wrap inside their cell. */
const MAX_DEVICE = 40;

/** The width to draw a plan in: the terminal's, or {@link PLAN_TABLE_COLUMNS} when not a terminal. */
export function planColumns(io: { stdoutIsTerminal: boolean; columns(): number }): number {
  return io.stdoutIsTerminal ? io.columns() : PLAN_TABLE_COLUMNS;
}

/**
 * Column widths for a table `columns` wide whose longest device name is
 * `longestDevice`: the device column holds that name whole (up to 40), the
 * value column gets 34 and the reason what is left (up to 80); on a terminal
 * too narrow for that, the value and reason columns share the rest (16 each
 * at least, so the narrowest table is the device column plus 61).
 */
export function planColumnWidths(columns: number, longestDevice: number): number[] {
  const device = Math.min(MAX_DEVICE, Math.max(14, longestDevice + 2));
  const wide = Math.max(26, device);
  const fixed = NUM + ACTION + wide + 34 + BORDERS;
  if (columns - fixed >= 24) return [NUM, ACTION, wide, 34, Math.min(80, columns - fixed)];
  // From 80 columns up the table fits: a long name wraps in a narrower device column.
  const fits = columns >= 80 ? Math.max(14, columns - BORDERS - NUM - ACTION - 32) : device;
  const room = columns - BORDERS - NUM - ACTION - Math.min(device, fits);
  const value = Math.max(16, Math.floor(room * 0.45));
  return [NUM, ACTION, Math.min(device, fits), value, Math.max(16, room - value)];
}

/**
 * The plan table, `columns` wide where that leaves each column room (see
 * {@link planColumnWidths}). A device name is never cut short: one longer
 * than its column wraps.
 */
export function renderPlan(p: PreflightedPlan, s: Style, columns = PLAN_TABLE_COLUMNS): string {
  const changes = new Map(p.changes.map((c) => [c.where, c]));
  const names = [...p.plan.actions, ...(p.plan.rollback ?? [])].flatMap((a) =>
    a.type === "read"
      ? a.devices
      : a.type === "write"
      ? [a.device]
      : a.type === "scan"
      ? [a.writeDevice]
      : []
  ).map((n) => one(n));
  const table = new Table({
    head: ["#", "Action", "Device", "Current → New (Δ)", "Reason / detail"].map((h) => s.bold(h)),
    style: { head: [], border: [] },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
    wordWrap: true,
    colWidths: planColumnWidths(columns, Math.max(0, ...names.map((n) => n.length))),
  });
  const rows = (list: Action[], prefix: string, label: string) =>
    list.forEach((a, i) =>
      table.push(row(`${prefix}[${i}]`, label ? `${label} ${i + 1}` : String(i + 1), a, changes, s))
    );
  rows(p.plan.actions, "actions", "");
  rows(p.plan.rollback ?? [], "rollback", "rb");
  const lines = [s.bold(one(p.plan.description)), table.toString()];
  const facts = [
    `about ${formatSeconds(p.estimatedSeconds)}`,
    ...(p.scanPoints ? [`${p.scanPoints} scan points`] : []),
    p.plan.rollback?.length ? "rollback given" : "on failure: originals restored",
    ...(p.plan.abortOnSeverity ? [`aborts at ${p.plan.abortOnSeverity}`] : []),
  ];
  lines.push(s.dim(`${facts.join(" · ")}\nplan hash ${p.hash}`));
  if (p.violations.length) {
    lines.push(s.red(`${p.violations.length} violation${p.violations.length > 1 ? "s" : ""}:`));
    for (const v of p.violations) lines.push(s.red(`  ${one(violationText(v))}`));
  }
  return `${lines.join("\n")}\n`;
}

/** One line of untrusted text, as a cell shows it. */
function one(text: string | number): string {
  return untrusted(String(text));
}

/** A cell of device names: wrapped anywhere, never cut short with "…". */
function devices(names: string[]): Table.Cell {
  return { content: names.map(one).join("\n"), wordWrap: true, wrapOnWordBoundary: false };
}

function row(
  where: string,
  n: string,
  a: Action,
  changes: Map<string, PlannedChange>,
  s: Style,
): Table.Cell[] {
  const c = changes.get(where);
  switch (a.type) {
    case "read":
      return [
        n,
        "read",
        devices(
          a.devices.length <= 3
            ? a.devices
            : [...a.devices.slice(0, 3), `+${a.devices.length - 3} more`],
        ),
        "",
        one(a.label ?? ""),
      ];
    case "wait":
      return [n, "wait", "", `${a.seconds} s`, one(a.reason ?? "")];
    case "write":
      return [
        n,
        s.yellow("write"),
        devices([a.device]),
        change(c?.from ?? null, a.value, c?.delta, c?.units),
        `${one(a.reason)}${confirmedBy(c, s)}`,
      ];
    case "scan":
      return [
        n,
        s.yellow("scan"),
        devices([a.writeDevice]),
        `${show(c?.from ?? null)} → ${a.start} … ${a.stop}${c?.units ? ` ${one(c.units)}` : ""}`,
        `${a.steps} points, dwell ${a.dwellSeconds} s; reads ${list(a.readDevices)}${
          confirmedBy(c, s)
        }`,
      ];
  }
}

/** A second line naming the device whose reading will confirm the change, or that none will. */
function confirmedBy(c: PlannedChange | undefined, s: Style): string {
  const p = c?.readback;
  if (!p) return "";
  if (!p.device) return `\n${s.dim("no readback device")}`;
  return `\n${s.dim(`confirmed by ${one(partnerText(p))}`)}`;
}

function change(
  from: Value | null,
  to: number | string,
  delta: number | undefined,
  units = "",
): string {
  const u = units ? ` ${one(units)}` : "";
  // "(Δ+1)" in one piece: a wrapped cell never leaves "(Δ" on a line without its value.
  const d = delta === undefined ? "" : ` (Δ${delta >= 0 ? "+" : ""}${round6(delta)})`;
  return `${show(from)} → ${one(to)}${u}${d}`;
}

function list(devices: string[]): string {
  const shown = devices.slice(0, 3).map(one).join(", ");
  return devices.length <= 3 ? shown : `${shown} +${devices.length - 3} more`;
}

function show(v: Value | null): string {
  if (v === null) return "?";
  if (typeof v === "number") return String(round6(v));
  return Array.isArray(v) ? "[waveform]" : one(String(v));
}

export function formatSeconds(s: number): string {
  return s < 90 ? `${Math.round(s * 10) / 10} s` : `${Math.round(s / 6) / 10} min`;
}
