/**
 * `accel-agent eval compare A.json B.json`: two runs side by side, per task
 * and overall, with the change in pass rate and whether the two 95%
 * intervals are apart (a change worth believing) or overlap.
 *
 * @module
 */
import { z } from "zod";
import type { EvalReport, Summary } from "./report.ts";
import { table } from "./report.ts";
import { parseJsonFile } from "../util/json_file.ts";

/** One task in both runs (or in one only). */
export interface TaskDiff {
  task: string;
  a?: Summary;
  b?: Summary;
  /** b's pass rate minus a's; undefined when the task is in one run only. */
  delta?: number;
  /** True when the two intervals do not overlap. */
  separated: boolean;
}

export interface Comparison {
  schema: "accel-agent.eval-compare/1";
  a: { model: string; startedAt: string };
  b: { model: string; startedAt: string };
  tasks: TaskDiff[];
  total: TaskDiff;
}

const SummarySchema = z.looseObject({
  name: z.string(),
  passes: z.number(),
  attempts: z.number(),
  rate: z.number(),
  interval: z.tuple([z.number(), z.number()]),
  medianTokens: z.number(),
  medianToolCalls: z.number(),
  medianModelCalls: z.number(),
  medianWallMs: z.number(),
  costUsd: z.number().optional(),
  reasons: z.array(z.string()),
}) satisfies z.ZodType<Summary>;

/** What a comparison reads of an eval record. */
export type ComparedReport = Pick<EvalReport, "schema" | "model" | "startedAt" | "tasks" | "total">;

const ComparedReportSchema = z.looseObject({
  schema: z.literal("accel-agent.eval/1"),
  model: z.string(),
  startedAt: z.string(),
  tasks: z.array(SummarySchema),
  total: SummarySchema,
}) satisfies z.ZodType<ComparedReport>;

/**
 * Reads a file written by `eval --out` or `eval --json`; throws a
 * `CorruptFileError` saying what is wrong, where, and what to pass instead.
 */
export function parseReport(text: string, source: string): ComparedReport {
  return parseJsonFile(ComparedReportSchema, text, {
    where: source,
    what: "an eval record (schema accel-agent.eval/1)",
    fix: "pass a file from eval --out",
  });
}

function diff(task: string, a?: Summary, b?: Summary): TaskDiff {
  const both = a && b;
  return {
    task,
    ...(a ? { a } : {}),
    ...(b ? { b } : {}),
    ...(both ? { delta: b.rate - a.rate } : {}),
    separated: both ? a.interval[1] < b.interval[0] || b.interval[1] < a.interval[0] : false,
  };
}

export function compareReports(a: ComparedReport, b: ComparedReport): Comparison {
  const names = [...new Set([...a.tasks, ...b.tasks].map((t) => t.name))].sort();
  const find = (r: ComparedReport, n: string) => r.tasks.find((t) => t.name === n);
  return {
    schema: "accel-agent.eval-compare/1",
    a: { model: a.model, startedAt: a.startedAt },
    b: { model: b.model, startedAt: b.startedAt },
    tasks: names.map((n) => diff(n, find(a, n), find(b, n))),
    total: diff("all", a.total, b.total),
  };
}

const cell = (s?: Summary) => (s ? `${s.passes}/${s.attempts}` : "–");
const signed = (d?: number) =>
  d === undefined ? "only one" : d === 0 ? "0" : `${d > 0 ? "+" : ""}${Math.round(d * 100)}%`;

/** The text: tasks whose result changed first, then the unchanged count and the total. */
export function comparisonText(c: Comparison): string {
  const changed = c.tasks.filter((t) => t.delta !== 0);
  const rows = [
    ["task", "A", "B", "change", "intervals"],
    ...changed.map((t) => [
      t.task,
      cell(t.a),
      cell(t.b),
      signed(t.delta),
      t.separated ? "apart" : "overlap",
    ]),
    [
      "all",
      cell(c.total.a),
      cell(c.total.b),
      signed(c.total.delta),
      c.total.separated ? "apart" : "overlap",
    ],
  ];
  return [
    `A: ${c.a.model} (${c.a.startedAt})`,
    `B: ${c.b.model} (${c.b.startedAt})`,
    "",
    table(rows),
    "",
    `${c.tasks.length - changed.length} task(s) unchanged`,
    "",
  ].join("\n");
}
