/**
 * One benchmark figure: what was measured beside the baseline measured in
 * the same run, and the goal it is judged against.
 *
 * @module
 */
export interface Figure {
  name: string;
  /** Median of what was measured, in ms unless `unit` says otherwise. */
  value: number;
  /** Median of the baseline measured in the same run. */
  baseline: number;
  /** What the goal is judged on (the value itself, or value − baseline). */
  judged: string;
  goal: string;
  ok: boolean;
  /** Of value and baseline; ms when absent. */
  unit?: string;
}
