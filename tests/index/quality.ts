/**
 * Search quality on the labelled operator queries of `queries.toml`:
 * precision at k (k = min(20, size of the correct set)) per query, per class,
 * for the tuning set and the held-back set. Used by the quality test and the bench.
 *
 * @module
 */
import { parse } from "smol-toml";
import { type DeviceIndex, rankedSearch } from "../../src/index/mod.ts";

/** One labelled query. */
export interface LabelledQuery {
  text: string;
  class: string;
  expect: string[];
  held_out: boolean;
}

/** The result of one query. */
export interface QueryScore {
  query: LabelledQuery;
  k: number;
  correct: number;
  precision: number;
  /** The top k names that are not in the correct set. */
  wrong: string[];
}

export const QUERIES_URL = new URL("./queries.toml", import.meta.url);
/** The labelled questions of the second facility (another facility's conventions). */
export const SECOND_QUERIES_URL = new URL("./second_facility_queries.toml", import.meta.url);

/** The labelled queries. */
export async function loadQueries(url: URL = QUERIES_URL): Promise<LabelledQuery[]> {
  const raw = parse(await Deno.readTextFile(url)) as { query: Record<string, unknown>[] };
  return raw.query.map((q) => ({
    text: String(q.text),
    class: String(q.class),
    expect: (q.expect as string[]).map(String),
    held_out: q.held_out === true,
  }));
}

/** A * ? [..] glob as an anchored RegExp (case-sensitive, as names are written). */
function globRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

/**
 * Precision at k of one query against the index. A query that should find
 * nothing (`expect = []`) scores 1 when the answer is empty, else 0.
 */
export function scoreQuery(index: DeviceIndex, q: LabelledQuery): QueryScore {
  if (q.expect.length === 0) {
    const page = rankedSearch(index, q.text, { limit: 3 });
    const wrong = page.devices.map((d) => d.name);
    return { query: q, k: 0, correct: 0, precision: page.total === 0 ? 1 : 0, wrong };
  }
  const res = q.expect.map(globRegExp);
  const correctSet = [...index.data.names].filter((n) => res.some((r) => r.test(n)));
  if (correctSet.length === 0) throw new Error(`"${q.text}": its expected set matches no device`);
  const k = Math.min(20, correctSet.length);
  const top = rankedSearch(index, q.text, { limit: k }).devices.map((d) => d.name);
  const good = new Set(correctSet);
  const wrong = top.filter((n) => !good.has(n));
  const correct = top.length - wrong.length;
  return { query: q, k, correct, precision: correct / k, wrong };
}

/** Mean precision of some scores (1 when there are none). */
export function mean(scores: QueryScore[]): number {
  return scores.length ? scores.reduce((s, x) => s + x.precision, 0) / scores.length : 1;
}

/** Lines of the per-class report: tuning set, held-back set, and every class. */
export function qualityReport(scores: QueryScore[]): string[] {
  const own = scores.filter((s) => !s.query.held_out);
  const held = scores.filter((s) => s.query.held_out);
  const lines = [
    `informal search precision@k (k = min(20, |correct|)) on ${scores.length} operator queries`,
    `  tuning set   ${own.length.toString().padStart(3)} queries  mean ${mean(own).toFixed(3)}`,
    `  held back    ${held.length.toString().padStart(3)} queries  mean ${mean(held).toFixed(3)}`,
  ];
  const classes = [...new Set(scores.map((s) => s.query.class))].sort();
  for (const c of classes) {
    const a = own.filter((s) => s.query.class === c);
    const b = held.filter((s) => s.query.class === c);
    lines.push(
      `  ${c.padEnd(9)} tuning ${mean(a).toFixed(3)} (${a.length})  held back ${
        b.length ? mean(b).toFixed(3) : "  -  "
      } (${b.length})`,
    );
  }
  // Held-back queries are reported by their means only, so nobody tunes on them.
  for (const s of scores.filter((x) => x.precision < 1 && !x.query.held_out)) {
    lines.push(
      `  below 1: "${s.query.text}" ${s.correct}/${s.k}${
        s.query.held_out ? " (held back)" : ""
      }; e.g. ${s.wrong.slice(0, 3).join(", ")}`,
    );
  }
  return lines;
}
