/**
 * A plan's actions as records, for a terminal too narrow for its table: when
 * the columns cannot hold each device name, value and word of a reason
 * whole, each action is drawn as its number and kind on one line, then one
 * `Label   text` line per other column, wrapped to the terminal, so nothing
 * is split but a single word wider than the terminal. Every line begins with
 * the program's own text (the number, or the indentation of a label), never
 * with text from outside.
 *
 * @module
 */
import { screenWidth, wrapLine } from "./screen_text.ts";

/** Text of a cell, styled line by line once wrapped. */
export interface Part {
  text: string;
  paint?: (text: string) => string;
}

/** A cell: parts one below the other. */
export type Cell = Part[];

/** What a record calls the columns after "#" and "Action". */
const LABELS = ["Device", "Change", "Detail"];
const INDENT = "    ";
const LABEL_WIDTH = Math.max(...LABELS.map((l) => l.length)) + 3;

/** A cell's lines, each wrapped to `width` columns by the width the terminal draws, then styled. */
export function cellLines(c: Cell, width: number): string[] {
  return c.flatMap(({ text, paint }) =>
    text.split("\n").flatMap((l) => wrapLine(l, width)).map((l) => (paint ? paint(l) : l))
  );
}

/** The room a record gives a column's text in a box `columns` wide. */
export function recordRoom(columns: number): number {
  return Math.max(1, columns - 4 - INDENT.length - LABEL_WIDTH);
}

/** The words of a cell, by the width the terminal draws. */
function wordWidths(c: Cell): number[] {
  return c.flatMap((p) => p.text.split(/\s+/).map(screenWidth));
}

/**
 * Whether the table splits no word that a record would keep whole: every
 * word of every row fits its column (`widths` with `padding`; device names
 * up to `maxDevice`, longer ones wrap in their column by design), or is too
 * wide for a record `columns` wide as well.
 */
export function wordsFit(
  rows: Cell[][],
  widths: number[],
  padding: number,
  maxDevice: number,
  columns: number,
): boolean {
  const room = recordRoom(columns);
  return rows.every((cells) =>
    cells.every((c, col) => {
      const fits = (widths[col] ?? 0) - padding;
      const wraps = (w: number) => w > room || (col === 2 && w > maxDevice);
      return wordWidths(c).every((w) => w <= fits || wraps(w));
    })
  );
}

/**
 * The rows (without the headings) as records in a box `columns` wide: each
 * line between `│`, as the table's are, so the table's frame still tells the
 * plan's own lines from the program's.
 */
export function recordLines(rows: Cell[][], columns: number, dim: (t: string) => string): string[] {
  const inner = Math.max(1, columns - 4);
  const room = recordRoom(columns);
  const out: string[] = [];
  for (const [n, action, ...rest] of rows) {
    out.push(`${cellLines(n ?? [], inner)[0] ?? ""}  ${cellLines(action ?? [], inner)[0] ?? ""}`);
    rest.forEach((c, i) => {
      // An empty column says nothing in a record (a read has no change, a wait no device).
      const lines = cellLines(c, room).filter((line, _, all) => all.length > 1 || line !== "");
      lines.forEach((line, k) => {
        const label = k === 0
          ? dim((LABELS[i] ?? "").padEnd(LABEL_WIDTH))
          : " ".repeat(LABEL_WIDTH);
        out.push(`${INDENT}${label}${line}`);
      });
    });
  }
  const pad = (l: string) => `│ ${l}${" ".repeat(Math.max(0, inner - screenWidth(l)))} │`;
  return [`┌${"─".repeat(inner + 2)}┐`, ...out.map(pad), `└${"─".repeat(inner + 2)}┘`];
}
