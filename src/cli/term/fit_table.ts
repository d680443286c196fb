/**
 * A table no wider than the terminal: each column as wide as its widest
 * line when that fits, otherwise the widest columns give way first, down to
 * their widest word, so cells wrap between words and no word is split; only
 * when even the words cannot fit does the widest column break them. Cells
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

/** A cell: its text, and how many columns it spans. */
export interface FitCell {
  content: string;
  colSpan?: number;
}

/** Borders take one column between cells and at each side; cells have one space of padding each side. */
const PAD = 2;

/** The narrowest a column is made when words must be broken. */
const FLOOR = 3;

/**
 * Column widths (cell text only, without padding) for `total` columns of
 * terminal: the natural widths when they fit, else the widest columns
 * narrowed first down to their widest word, then below it.
 */
export function fitWidths(natural: number[], words: number[], total: number): number[] {
  const w = [...natural];
  const room = total - (w.length + 1) - PAD * w.length;
  let excess = w.reduce((a, b) => a + b, 0) - room;
  const shrink = (floor: (i: number) => number) => {
    while (excess > 0) {
      let pick = -1;
      for (let i = 0; i < w.length; i++) {
        if ((w[i] as number) > floor(i) && (pick < 0 || (w[i] as number) > (w[pick] as number))) {
          pick = i;
        }
      }
      if (pick < 0) return;
      w[pick] = (w[pick] as number) - 1;
      excess--;
    }
  };
  shrink((i) => Math.min(natural[i] as number, words[i] as number));
  shrink(() => FLOOR);
  return w;
}

export interface FitTable {
  push(row: (string | FitCell)[]): void;
  toString(): string;
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
      return table.toString();
    },
  };
}
