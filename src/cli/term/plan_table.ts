/**
 * A plan as the operator sees it: the plan's description in a marked block,
 * every action with current → new (Δ), reasons, the device whose reading
 * will confirm each write or that none will, the scan summary, the rollback,
 * the estimated duration, the hash the decision is bound to, and last, on
 * the lines right above the approval question, what the plan writes.
 *
 * Nothing a plan or the facility wrote can imitate the table. Every such
 * text (names, reasons, labels, units, values, violations) is shown through
 * {@link screenText}: escaped by {@link untrusted}, every character of
 * uncertain width escaped too, and in a cell the table's own glyphs. Cells
 * are bounded and wrapped by the program to their column, and the table is
 * drawn here from them; it fits the terminal; and every line is cut to the
 * terminal's width by the program, never by the terminal, its continuation
 * marked ({@link fitToWidth}). So no line can begin with text from outside
 * except behind the plan text's mark.
 *
 * @module
 */
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
import { cellText, fitToWidth, screenText, screenWidth, wrapLine } from "./screen_text.ts";
import { type Cell, cellLines, type Part, recordLines, wordsFit } from "./plan_records.ts";

/** The table's width when output is not a terminal (a file, a pipe). */
export const PLAN_TABLE_COLUMNS = 120;
/** The "#" and "Action" columns; a table of five columns has six borders. */
const NUM = 6, ACTION = 8, BORDERS = 6;
/** Device names longer than this wrap inside their cell. */
const MAX_DEVICE = 40;
/** The narrowest a device, value or reason column gets: 6 characters and the padding. */
const MIN_CELL = 8;
/** A cell's padding, one column each side. */
const PADDING = 2;
/** The plan's description takes at most this many lines of the screen. */
export const MAX_DESCRIPTION_LINES = 10;
/** What begins every line of the plan's own text: the table never begins a line with it. */
export const PLAN_TEXT_MARK = "» ";

/** The width to draw a plan in: the terminal's, or {@link PLAN_TABLE_COLUMNS} when not a terminal. */
export function planColumns(io: { stdoutIsTerminal: boolean; columns(): number }): number {
  return io.stdoutIsTerminal ? io.columns() : PLAN_TABLE_COLUMNS;
}

/**
 * Column widths for a table `columns` wide whose longest device name is
 * `longestDevice`: the device column holds that name whole (up to 40), the
 * value column gets 34 and the reason what is left (up to 80); on a terminal
 * too narrow for that the device column gives way first, then value and
 * reason share the rest, so the table is never wider than the terminal down
 * to 44 columns (every column at its narrowest; names and values wrap).
 */
export function planColumnWidths(columns: number, longestDevice: number): number[] {
  const device = Math.min(MAX_DEVICE, Math.max(14, longestDevice + 2));
  const wide = Math.max(26, device);
  const fixed = NUM + ACTION + wide + 34 + BORDERS;
  if (columns - fixed >= 24) return [NUM, ACTION, wide, 34, Math.min(80, columns - fixed)];
  const room = columns - BORDERS - NUM - ACTION;
  const dev = Math.max(MIN_CELL, Math.min(device, room - 32));
  const left = room - dev;
  const value = Math.max(MIN_CELL, Math.floor(left * 0.45));
  return [NUM, ACTION, dev, value, Math.max(MIN_CELL, left - value)];
}

/**
 * The plan as the operator reads it, every line at most `columns` wide (see
 * {@link planColumnWidths}; below 44 columns the program cuts the lines
 * itself). A device name is never cut short: one longer than its column wraps.
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
  ).map((n) => screenWidth(cell(n)));
  const colWidths = planColumnWidths(columns, Math.max(0, ...names));
  const rows = (list: Action[], prefix: string, label: string) =>
    list.map((a, i) =>
      row(`${prefix}[${i}]`, label ? `${label} ${i + 1}` : String(i + 1), a, changes, s)
    );
  const body = [
    ...rows(p.plan.actions, "actions", ""),
    ...rows(p.plan.rollback ?? [], "rollback", "rb"),
  ];
  const head = HEADINGS.map((h) => [{ text: h, paint: s.bold }]);
  const draw = (cells: Cell[]) =>
    drawRow(cells.map((c, col) => cellLines(c, (colWidths[col] ?? 0) - PADDING)), colWidths);
  // Too narrow for the table without splitting a name or a word: one record per action.
  const table = wordsFit([head, ...body], colWidths, PADDING, MAX_DEVICE - PADDING, columns)
    ? [
      border("┌", "┬", "┐", colWidths),
      ...[head, ...body].flatMap(draw),
      border("└", "┴", "┘", colWidths),
    ]
    : recordLines(body, columns, s.dim);
  const lines = [...descriptionBlock(p.plan.description, s, columns), ...table];
  const facts = [
    `about ${formatSeconds(p.estimatedSeconds)}`,
    ...(p.scanPoints ? [`${p.scanPoints} scan points`] : []),
    p.plan.rollback?.length ? "rollback given" : "on failure: originals restored",
    ...(p.plan.abortOnSeverity ? [`aborts at ${p.plan.abortOnSeverity}`] : []),
  ];
  lines.push(s.dim(`${facts.join(" · ")}\nplan hash ${p.hash}`));
  if (p.violations.length) {
    lines.push(s.red(`${p.violations.length} violation${p.violations.length > 1 ? "s" : ""}:`));
    for (const v of p.violations) lines.push(s.red(`  ${cell(violationText(v))}`));
  }
  lines.push(changeSummary(p, s, columns));
  return `${fitToWidth(lines.join("\n"), columns)}\n`;
}

/**
 * The plan's description as a labelled block: every line begins with
 * {@link PLAN_TEXT_MARK}, wrapped by the program to `columns`, at most
 * {@link MAX_DESCRIPTION_LINES} lines (then one saying how much is not shown).
 */
export function descriptionBlock(description: string, s: Style, columns: number): string[] {
  const room = Math.max(1, columns - PLAN_TEXT_MARK.length);
  const wrapped = wrapLine(screenText(description), room);
  const shown = wrapped.length > MAX_DESCRIPTION_LINES
    ? [
      ...wrapped.slice(0, MAX_DESCRIPTION_LINES - 1),
      `… ${wrapped.length - MAX_DESCRIPTION_LINES + 1} more lines not shown`,
    ]
    : wrapped;
  return [
    s.dim("Plan description (the plan's own words, not checked):"),
    ...shown.map((l) => `${s.cyan(PLAN_TEXT_MARK)}${s.bold(l)}`),
  ];
}

/**
 * What the plan writes, for right above the approval question whatever the
 * table's length: every device written and the count of writes, each scan's
 * device and points, any device only the rollback writes (after the plan,
 * whatever its outcome: a completed plan runs its rollback too), or "no
 * writes". Every name is given, never "and K more": a hidden name is a write
 * the operator did not see. Lines are cut by the program between names to
 * fit `columns`, each after the first indented.
 */
export function changeSummary(p: PreflightedPlan, s: Style, columns: number): string {
  const written = (list: Action[]) =>
    list.flatMap((
      a,
    ) => (a.type === "write" ? [a.device] : a.type === "scan" ? [a.writeDevice] : []));
  const writes = p.plan.actions.flatMap((a) => (a.type === "write" ? [a.device] : []));
  const devices = [...new Set(writes)].map(cell);
  const scans = p.plan.actions.flatMap((a) =>
    a.type === "scan" ? [`${cell(a.writeDevice)} (${a.steps} points)`] : []
  );
  const changed = new Set(written(p.plan.actions));
  const rollbackOnly = [...new Set(written(p.plan.rollback ?? []))].filter((d) => !changed.has(d))
    .map(cell);
  if (!devices.length && !scans.length && !rollbackOnly.length) {
    return s.green("No writes: this plan only reads and waits.");
  }
  const parts: string[] = [];
  if (devices.length) {
    const count = devices.length === writes.length
      ? ""
      : ` (${writes.length} write${writes.length === 1 ? "" : "s"})`;
    parts.push(
      `writes ${devices.length} device${devices.length === 1 ? "" : "s"}${count}: ${
        devices.join(", ")
      }`,
    );
  }
  if (scans.length) {
    parts.push(`scans ${scans.length === 1 ? "" : `${scans.length} devices: `}${scans.join(", ")}`);
  }
  if (rollbackOnly.length) {
    // A rollback runs after every outcome, a completed plan's too: never "on failure" only.
    parts.push(
      `after the plan, whatever its outcome, its rollback writes ${rollbackOnly.join(", ")}`,
    );
  }
  const text = parts.join("; ");
  const [first = "", ...more] = wrapLine(
    `${text.charAt(0).toUpperCase()}${text.slice(1)}.`,
    Math.max(1, columns - SUMMARY_INDENT.length),
  );
  return [first, ...more.map((l) => SUMMARY_INDENT + l)].map((l) => s.yellow(s.bold(l))).join(
    "\n",
  );
}

/** What begins each line of the summary after its first. */
const SUMMARY_INDENT = "  ";

/** Text from outside as a cell shows it: one line, certain widths, no table glyph, bounded. */
function cell(text: string | number): string {
  return cellText(String(text));
}

/** The table's headings. */
const HEADINGS = ["#", "Action", "Device", "Current → New (Δ)", "Reason / detail"];

/** One part, unstyled. */
function plain(text: string): Cell {
  return [{ text }];
}

/**
 * The lines of one row of the table: cells of lines that fit their columns
 * (`widths` with the padding), side by side between `│`, each padded to its
 * column by the width the terminal draws.
 */
function drawRow(cells: string[][], widths: number[]): string[] {
  const height = Math.max(1, ...cells.map((c) => c.length));
  const lines: string[] = [];
  for (let k = 0; k < height; k++) {
    const parts = cells.map((c, col) => {
      const text = c[k] ?? "";
      const room = (widths[col] ?? 0) - PADDING;
      return ` ${text}${" ".repeat(Math.max(0, room - screenWidth(text)))} `;
    });
    lines.push(`│${parts.join("│")}│`);
  }
  return lines;
}

/** The table's top or bottom border. */
function border(left: string, mid: string, right: string, widths: number[]): string {
  return `${left}${widths.map((w) => "─".repeat(w)).join(mid)}${right}`;
}

/** A cell of device names, one a line (a name longer than the column wraps, never cut short). */
function devices(names: string[]): Cell {
  return names.map((n) => ({ text: cell(n) }));
}

function row(
  where: string,
  n: string,
  a: Action,
  changes: Map<string, PlannedChange>,
  s: Style,
): Cell[] {
  const c = changes.get(where);
  switch (a.type) {
    case "read":
      return [
        plain(n),
        plain("read"),
        devices(
          a.devices.length <= 3
            ? a.devices
            : [...a.devices.slice(0, 3), `+${a.devices.length - 3} more`],
        ),
        plain(""),
        plain(cell(a.label ?? "")),
      ];
    case "wait":
      return [
        plain(n),
        plain("wait"),
        plain(""),
        plain(`${a.seconds} s`),
        plain(cell(a.reason ?? "")),
      ];
    case "write":
      return [
        plain(n),
        [{ text: "write", paint: s.yellow }],
        devices([a.device]),
        plain(change(c?.from ?? null, a.value, c?.delta, c?.units)),
        [{ text: cell(a.reason) }, ...confirmedBy(c, s)],
      ];
    case "scan":
      return [
        plain(n),
        [{ text: "scan", paint: s.yellow }],
        devices([a.writeDevice]),
        plain(
          `${show(c?.from ?? null)} → ${a.start} … ${a.stop}${c?.units ? ` ${cell(c.units)}` : ""}`,
        ),
        [
          { text: `${a.steps} points, dwell ${a.dwellSeconds} s; reads ${list(a.readDevices)}` },
          ...confirmedBy(c, s),
        ],
      ];
  }
}

/** A second line naming the device whose reading will confirm the change, or that none will. */
function confirmedBy(c: PlannedChange | undefined, s: Style): Part[] {
  const p = c?.readback;
  if (!p) return [];
  if (!p.device) return [{ text: "no readback device", paint: s.dim }];
  return [{ text: `confirmed by ${cell(partnerText(p))}`, paint: s.dim }];
}

function change(
  from: Value | null,
  to: number | string,
  delta: number | undefined,
  units = "",
): string {
  const u = units ? ` ${cell(units)}` : "";
  // "(Δ+1)" in one piece: a wrapped cell never leaves "(Δ" on a line without its value.
  const d = delta === undefined ? "" : ` (Δ${delta >= 0 ? "+" : ""}${round6(delta)})`;
  return `${show(from)} → ${cell(to)}${u}${d}`;
}

function list(devices: string[]): string {
  const shown = devices.slice(0, 3).map(cell).join(", ");
  return devices.length <= 3 ? shown : `${shown} +${devices.length - 3} more`;
}

function show(v: Value | null): string {
  if (v === null) return "?";
  if (typeof v === "number") return String(round6(v));
  return Array.isArray(v) ? "[waveform]" : cell(String(v));
}

export function formatSeconds(s: number): string {
  return s < 90 ? `${Math.round(s * 10) / 10} s` : `${Math.round(s / 6) / 10} min`;
}
