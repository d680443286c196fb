/**
 * A table no wider than the terminal: each column as wide as its widest
 * line when that fits, otherwise the widest columns give way first, down to
 * their widest word, so cells wrap between words and no word is split. When
 * even the widest words cannot stand side by side, each row is drawn as a
 * record instead (its first cell, then one `Header  value` line per other
 * column); only a single word wider than the terminal is ever broken. Cells
 * are wrapped here (`src/util/text_wrap.ts`) and drawn by cli-table3, which
 * then has nothing left to wrap or cut.
 *
 * @example
 * ```ts
 * const t = fitTable(["Device", "Description"], style(false), 80);
 * t.push(["RF:PHASE:SETPT", "RF phase setpoint"]);
 * console.log(t.toString());
 * ```
 *
 * @module
 */
import Table from "cli-table3";
import type { Style } from "./style.ts";
import { visibleWidth, widestLine, widestWord, wrapText } from "../../util/text_wrap.ts";
import { fitWidths, PAD } from "./fit_widths.ts";

export { fitWidths };

/** A cell: its text, and how many columns it spans. */
export interface FitCell {
  content: string;
  colSpan?: number;
}

export interface FitTable {
  push(row: (string | FitCell)[]): void;
  toString(): string;
}

/** The width a table may take: the terminal's; into a pipe or a file, no limit (lines stay whole for grep). */
export function tableWidth(io: { stdoutIsTerminal: boolean; columns(): number }): number {
  return io.stdoutIsTerminal ? io.columns() : Infinity;
}

/** A table of `head` columns drawn at most `width` columns wide; see the module's description. */
export function fitTable(head: string[], s: Style, width: number): FitTable {
  const rows: (string | FitCell)[][] = [];
  return {
    push: (row) => void rows.push(row),
    toString() {
      const natural = head.map((h) => visibleWidth(h));
      const words = head.map((h) => widestWord(h));
      for (const row of rows) {
        let col = 0;
        for (const cell of row) {
          const { content, colSpan = 1 } = typeof cell === "string" ? { content: cell } : cell;
          if (colSpan === 1 && col < head.length) {
            natural[col] = Math.max(natural[col] as number, widestLine(content));
            words[col] = Math.max(words[col] as number, widestWord(content));
          }
          col += colSpan;
        }
      }
      // A cell spanning columns wider than they are together widens the last of them.
      for (const row of rows) {
        let col = 0;
        for (const cell of row) {
          const { content, colSpan = 1 } = typeof cell === "string" ? { content: cell } : cell;
          const last = Math.min(col + colSpan, head.length) - 1;
          if (colSpan > 1 && last >= col) {
            const room = (lo: number[]) =>
              lo.slice(col, last + 1).reduce((a, b) => a + b, 0) + (last - col) * (PAD + 1);
            natural[last] = (natural[last] as number) +
              Math.max(0, widestLine(content) - room(natural));
            words[last] = (words[last] as number) + Math.max(0, widestWord(content) - room(words));
          }
          col += colSpan;
        }
      }
      // Columns that cannot hold their widest words side by side: one record per row instead.
      const least = words.reduce((a, b) => a + b, 0) + (PAD + 1) * head.length + 1;
      if (least > width) return records(head, rows, s, width);
      const widths = fitWidths(natural, words, width);
      const table = new Table({
        head: head.map((h, i) => s.bold(wrapText(h, widths[i] as number).join("\n"))),
        style: { head: [], border: [] },
        chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
        colWidths: widths.map((w) => w + PAD),
        wordWrap: false,
      });
      for (const row of rows) {
        let col = 0;
        table.push(row.map((cell) => {
          const { content, colSpan = 1 } = typeof cell === "string" ? { content: cell } : cell;
          const span = widths.slice(col, col + colSpan);
          col += colSpan;
          // A spanning cell has the borders and padding between its columns too.
          const inner = span.reduce((a, b) => a + b, 0) + (span.length - 1) * (PAD + 1);
          const text = wrapText(content, inner).join("\n");
          return colSpan > 1 ? { content: text, colSpan } : text;
        }));
      }
      // cli-table3 draws a lone junction line above a spanning cell when rows have no separators.
      return table.toString().split("\n").filter((l) => !/^[┴┬┼]+$/.test(l)).join("\n");
    },
  };
}

/** Rows as records: the first cell as a heading, then each other column as `Header  value`. */
function records(head: string[], rows: (string | FitCell)[][], s: Style, width: number): string {
  const label = Math.max(...head.slice(1).map(visibleWidth)) + 2;
  const out: string[] = [];
  for (const [i, row] of rows.entries()) {
    const cells = row.map((c) => typeof c === "string" ? { content: c, colSpan: 1 } : c);
    if (i > 0) out.push("");
    out.push(...wrapText(s.bold(cells[0]?.content ?? ""), width));
    let col = cells[0]?.colSpan ?? 1;
    for (const cell of cells.slice(1)) {
      const name = cell.colSpan && cell.colSpan > 1 ? "" : head[col] ?? "";
      col += cell.colSpan ?? 1;
      if (!cell.content) continue;
      const lines = wrapText(cell.content, Math.max(10, width - 2 - label));
      lines.forEach((l, i) =>
        out.push(
          `  ${
            (i === 0 ? s.dim(name) : "").padEnd(
              label + (i === 0 ? s.dim(name).length - name.length : 0),
            )
          }${l}`,
        )
      );
    }
  }
  return out.join("\n");
}
