/**
 * Edit distance for typo tolerance: insertions, deletions, substitutions and
 * swaps of neighbours ("qaud" → "quad" is one edit), given up past a budget.
 *
 * @module
 */

/** Optimal-string-alignment distance of `a` and `b`, or `budget + 1` once it must exceed `budget`. */
export function editDistance(a: string, b: string, budget: number): number {
  if (Math.abs(a.length - b.length) > budget) return budget + 1;
  let prev2 = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let curr = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    curr[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] ?? 0) + 1, (curr[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, (prev2[j - 2] ?? 0) + 1);
      }
      curr[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > budget) return budget + 1;
    [prev2, prev, curr] = [prev, curr, prev2];
  }
  return prev[b.length] ?? budget + 1;
}

/** How many edits a word of this length may carry and still be recognised. */
export function typoBudget(length: number): number {
  return length >= 8 ? 2 : length >= 4 ? 1 : 0;
}
