/**
 * The evaluation report: pass rates per task, per category and overall with
 * a 95% Wilson score interval, medians of tokens, tool calls, model calls and
 * wall time, and cost when prices are configured; as a text table and as the
 * `accel-agent.eval/1` JSON record (every attempt included).
 *
 * @module
 */
import type { AttemptRecord } from "./attempt.ts";

/** The 95% Wilson score interval of `passes` out of `n` (z = 1.96), as [low, high]. */
export function wilson(passes: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = passes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // Exact at the ends: no passes, the interval starts at 0; all passes, it ends at 1.
  const low = passes === 0 ? 0 : Math.max(0, centre - half);
  const high = passes === n ? 1 : Math.min(1, centre + half);
  return [low, high];
}

/** The median (the mean of the two middle values for an even count); 0 for none. */
export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] ?? 0 : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** One row of the report: a task, a category, or everything. */
export interface Summary {
  name: string;
  passes: number;
  attempts: number;
  rate: number;
  interval: [number, number];
  medianTokens: number;
  medianToolCalls: number;
  medianModelCalls: number;
  medianWallMs: number;
  /** Summed over attempts, when every attempt had prices. */
  costUsd?: number;
  /** Reasons of failed attempts, most frequent first (tasks only). */
  reasons: string[];
}

export function summarise(name: string, recs: AttemptRecord[]): Summary {
  const passes = recs.filter((r) => r.passed).length;
  const counts = new Map<string, number>();
  for (const r of recs) {
    if (!r.passed) counts.set(r.reason ?? "", (counts.get(r.reason ?? "") ?? 0) + 1);
  }
  const priced = recs.length > 0 && recs.every((r) => r.costUsd !== undefined);
  return {
    name,
    passes,
    attempts: recs.length,
    rate: recs.length ? passes / recs.length : 0,
    interval: wilson(passes, recs.length),
    medianTokens: median(recs.map((r) => r.tokens)),
    medianToolCalls: median(recs.map((r) => r.toolCalls)),
    medianModelCalls: median(recs.map((r) => r.modelCalls)),
    medianWallMs: median(recs.map((r) => r.wallMs)),
    ...(priced ? { costUsd: recs.reduce((s, r) => s + (r.costUsd ?? 0), 0) } : {}),
    reasons: [...counts].sort((a, b) => b[1] - a[1]).map(([r]) => r),
  };
}

/** The whole record of a run, as written by `--json` and `--out`. */
export interface EvalReport {
  schema: "accel-agent.eval/1";
  model: string;
  startedAt: string;
  repeat: number;
  tasks: Summary[];
  categories: Summary[];
  total: Summary;
  attempts: AttemptRecord[];
}

export function buildReport(
  model: string,
  startedAt: string,
  repeat: number,
  attempts: AttemptRecord[],
): EvalReport {
  const group = (key: (r: AttemptRecord) => string) => {
    const m = new Map<string, AttemptRecord[]>();
    for (const r of attempts) m.set(key(r), [...(m.get(key(r)) ?? []), r]);
    return [...m].map(([k, v]) => summarise(k, v));
  };
  return {
    schema: "accel-agent.eval/1",
    model,
    startedAt,
    repeat,
    tasks: group((r) => r.task),
    categories: group((r) => r.category).sort((a, b) => a.name.localeCompare(b.name)),
    total: summarise("all", attempts),
    attempts,
  };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

function row(s: Summary): string[] {
  return [
    s.name,
    `${s.passes}/${s.attempts}`,
    pct(s.rate),
    `${pct(s.interval[0])}–${pct(s.interval[1])}`,
    String(Math.round(s.medianTokens)),
    String(s.medianToolCalls),
    String(s.medianModelCalls),
    `${(s.medianWallMs / 1000).toFixed(1)} s`,
    s.costUsd === undefined ? "–" : `$${s.costUsd.toFixed(4)}`,
  ];
}

const HEAD = ["", "pass", "rate", "95% CI", "tokens", "tools", "calls", "wall", "cost"];

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(rows: string[][]): string {
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from(
    { length: columns },
    (_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)),
  );
  return rows.map((r) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")
      .trimEnd()
  ).join("\n");
}

/** The text report: tasks (with the first failure reason), categories, total. Medians per attempt. */
export function reportText(r: EvalReport): string {
  const tasks = table([["task", ...HEAD.slice(1)], ...r.tasks.map(row)]);
  const failures = r.tasks.filter((t) => t.reasons.length > 0).map((t) =>
    `  ${t.name}: ${t.reasons[0]}`
  );
  const cats = table([["category", ...HEAD.slice(1)], ...r.categories.map(row), row(r.total)]);
  return [
    `model ${r.model}, ${r.total.attempts} attempts (${r.repeat} per task); medians per attempt`,
    "",
    tasks,
    ...(failures.length ? ["", "failures:", ...failures] : []),
    "",
    cats,
    "",
  ].join("\n");
}
