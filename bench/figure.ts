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

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/**
 * A figure judged on its own median against a ceiling: `measured` beside
 * `baseline` (both medians of samples from the same run), ok at or below `limit`.
 */
export function atMost(
  name: string,
  measured: number[],
  baseline: number[] | number,
  limit: number,
  opts: { unit?: string; digits?: number; goal?: string } = {},
): Figure {
  const value = median(measured);
  const unit = opts.unit ?? "ms";
  return {
    name,
    value,
    baseline: typeof baseline === "number" ? baseline : median(baseline),
    judged: `${value.toFixed(opts.digits ?? 1)} ${unit}`,
    goal: opts.goal ?? `≤ ${limit} ${unit}`,
    ok: value <= limit,
    ...(opts.unit ? { unit: opts.unit } : {}),
  };
}
