/**
 * Column widths for a table no wider than the terminal: each column as wide
 * as its widest line when that fits, otherwise the widest columns give way
 * first, down to their widest word, then below it. Shared by the tables
 * drawn with cli-table3 (`fit_table.ts`) and the command line's search,
 * which draws its own so as not to load the library.
 *
 * @module
 */

/** Borders take one column between cells and at each side; cells have one space of padding each side. */
export const PAD = 2;

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
