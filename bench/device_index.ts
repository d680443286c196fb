/**
 * Device-index figures for `deno task bench`, each beside its baseline from
 * the same run:
 *
 * - wildcard patterns over 100k names: the index against the original
 *   design's search (a Python regex scan over every name, in a `python3`
 *   subprocess timed inside Python) and against today's linear scan
 *   (`searchDevices` as it was: a compiled wildcard tested on every name);
 * - informal search p50 at 100k and 1M names;
 * - 1M names: build time, cache write and load time, and the resident
 *   memory of a process holding the loaded index (beside an empty one);
 * - search quality on the labelled operator questions of both namespaces
 *   (the simulator's, and a second facility in another facility's
 *   conventions read through the fake ChannelFinder), per class: the mean
 *   precision@k of each set and of its held-back part, of whole sentences
 *   and of intent questions, and whether every question that should find
 *   nothing found nothing.
 *
 * @module
 */
import { IndexBuilder } from "../src/index/builder.ts";
import { DeviceIndex, Lexicon, lexiconDigest, rankedSearch } from "../src/index/mod.ts";
import { loadSynonyms } from "../src/index/synonyms.ts";
import { saveIndex } from "../src/index/cache.ts";
import type { IndexRecord } from "../src/index/record.ts";
import { simulatorIndexSource } from "../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../src/facility/facility.ts";
import { buildIndex } from "../src/index/mod.ts";
import {
  loadQueries,
  mean,
  qualityReport,
  type QueryScore,
  scoreQuery,
  SECOND_QUERIES_URL,
} from "../tests/index/quality.ts";
import { secondFacilityIndex } from "../tests/index/second_facility_index.ts";
import { BENCH_PATTERNS, BENCH_QUERIES, generateRecords } from "./index_names.ts";
import { atMost, type Figure, median } from "./figure.ts";

const REPS = 9;

function build(records: IndexRecord[], lexicon: Lexicon, digest: string): DeviceIndex {
  const b = new IndexBuilder(lexicon, `bench:${records.length}`, digest);
  for (const r of records) b.add(r);
  return new DeviceIndex(b.finish(), lexicon);
}

/** `searchDevices` as it was before the index: every name tested against the compiled pattern. */
function linearScan(records: IndexRecord[], pattern: string, limit = 50): number {
  const re = wildcardToRegExp(pattern);
  const page: IndexRecord[] = [];
  let total = 0;
  for (const r of records) {
    if (!re.test(r.name)) continue;
    if (page.length < limit) page.push({ ...r });
    total++;
  }
  return total;
}

const PYTHON_SCAN = `
import fnmatch, json, re, sys, time
names = open(sys.argv[1]).read().split("\\n")
patterns = json.loads(sys.argv[2])
reps = int(sys.argv[3])
out = {}
for p in patterns:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        rx = re.compile(fnmatch.translate(p), re.IGNORECASE)
        hits = [n for n in names if rx.match(n)]
        page = hits[:50]
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    out[p] = {"ms": times[len(times) // 2], "total": len(hits)}
print(json.dumps(out))
`;

async function pythonScan(
  names: string[],
  dir: string,
): Promise<Record<string, { ms: number; total: number }>> {
  const file = `${dir}/names.txt`;
  await Deno.writeTextFile(file, names.join("\n"));
  const out = await new Deno.Command("python3", {
    args: ["-c", PYTHON_SCAN, file, JSON.stringify(BENCH_PATTERNS), String(REPS)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`python3 scan failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

function time(f: () => unknown): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}

function ratioFigure(name: string, ours: number, base: number, least: number): Figure {
  const ratio = base / ours;
  return {
    name,
    value: ours,
    baseline: base,
    judged: `${ratio.toFixed(1)}× faster`,
    goal: `≥ ${least}×`,
    ok: ratio >= least,
  };
}

/** The baseline of a word search: every name and description scanned for every word. */
function wordScanSamples(records: IndexRecord[], reps: number): number[] {
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    for (const q of BENCH_QUERIES) {
      const words = q.toLowerCase().split(/\s+/);
      samples.push(time(() =>
        records.filter((r) => {
          const text = `${r.name} ${r.description}`.toLowerCase();
          return words.every((w) => text.includes(w));
        })
      ));
    }
  }
  return samples;
}

/** Informal latency samples over the benchmark queries (each run `reps` times). */
function informalSamples(index: DeviceIndex, reps: number): number[] {
  for (const q of BENCH_QUERIES) rankedSearch(index, q, { limit: 20 });
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    for (const q of BENCH_QUERIES) samples.push(time(() => rankedSearch(index, q, { limit: 20 })));
  }
  return samples;
}

const RSS_CHILD = `
// The agent's own modules (CLI, agent loop, tools, adapters), so the figure is the agent's footprint.
import "./src/app/app.ts";
import "./src/tools/mod.ts";
import { loadIndex } from "./src/index/cache.ts";
import { DeviceIndex, Lexicon, rankedSearch } from "./src/index/mod.ts";
import { loadSynonyms } from "./src/index/synonyms.ts";
const [file, source, digest] = Deno.args;
const t = performance.now();
const data = await loadIndex(file, source, digest);
if (!data) throw new Error("cache not loaded");
const index = new DeviceIndex(data, new Lexicon(await loadSynonyms()));
const ms = performance.now() - t;
rankedSearch(index, "horizontal steerers setpoint", { limit: 20 });
index.match({ pattern: "SR:BPM:*:X", limit: 50 });
globalThis.gc?.();
console.log(JSON.stringify({ ms, rss: Deno.memoryUsage().rss, devices: index.size }));
`;

async function childRss(args: string[], script: string): Promise<{ ms: number; rss: number }> {
  const dir = await Deno.makeTempDir({ dir: ".", prefix: ".bench-rss-" });
  try {
    const file = `${dir}/child.ts`;
    await Deno.writeTextFile(file, script.replaceAll("./src/", `${Deno.cwd()}/src/`));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--v8-flags=--expose-gc", file, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A mean precision@k judged against its floor. */
function meanFigure(name: string, scores: QueryScore[], floor: number): Figure {
  const m = mean(scores);
  return {
    name: `${name} (${scores.length} queries)`,
    value: m,
    baseline: floor,
    judged: m.toFixed(3),
    goal: `≥ ${floor.toFixed(2)}`,
    ok: m >= floor,
    unit: "",
  };
}

/** The quality figures of one namespace's labelled questions. */
function qualityFigures(label: string, scores: QueryScore[]): Figure[] {
  const answered = scores.filter((s) => s.query.expect.length > 0);
  const nothing = scores.filter((s) => s.query.expect.length === 0);
  const empty = nothing.filter((s) => s.precision === 1).length;
  const of = (c: string) => scores.filter((s) => s.query.class === c);
  return [
    meanFigure(`${label}: precision@k, tuning set`, answered.filter((s) => !s.query.held_out), 0.9),
    meanFigure(`${label}: precision@k, held back`, answered.filter((s) => s.query.held_out), 0.9),
    meanFigure(`${label}: precision@k, whole sentences`, of("sentence"), 0.85),
    meanFigure(`${label}: precision@k, intent`, of("intent"), 0.85),
    {
      name: `${label}: questions that should find nothing answered empty`,
      value: empty,
      baseline: nothing.length,
      judged: `${empty} of ${nothing.length}`,
      goal: "all",
      ok: empty === nothing.length,
      unit: "",
    },
  ];
}

/** Every device-index figure, and the lines of the quality report. */
export async function deviceIndexBench(): Promise<{ figures: Figure[]; report: string[] }> {
  const figures: Figure[] = [];
  const report: string[] = [];
  const synonyms = await loadSynonyms();
  const lexicon = new Lexicon(synonyms);
  const digest = lexiconDigest(synonyms);
  const dir = await Deno.makeTempDir({ prefix: "accel-index-bench-" });
  try {
    // ---- 100k names: patterns against both baselines, informal latency ----
    const small = generateRecords(100_000);
    const index = build(small, lexicon, digest);
    const python = await pythonScan([...index.data.names], dir);
    let ours = 0, linear = 0, py = 0;
    for (const p of BENCH_PATTERNS) {
      const a: number[] = [], l: number[] = [];
      for (let i = 0; i < REPS; i++) {
        a.push(time(() => index.match({ pattern: p, limit: 50 })));
        l.push(time(() => linearScan(small, p)));
      }
      const total = index.match({ pattern: p, limit: 0 }).total;
      const pyp = python[p];
      if (pyp === undefined || pyp.total !== total || linearScan(small, p) !== total) {
        throw new Error(`${p}: the index, the scan and Python disagree on the number of matches`);
      }
      ours += median(a);
      linear += median(l);
      py += pyp.ms;
      report.push(
        `  ${p.padEnd(22)} ${String(total).padStart(6)} matches  index ${
          median(a).toFixed(2)
        } ms  ` +
          `linear ${median(l).toFixed(2)} ms  python ${pyp.ms.toFixed(2)} ms`,
      );
    }
    figures.push(
      ratioFigure(
        "wildcard search, 100k names: index vs Python regex scan (sum of 8)",
        ours,
        py,
        20,
      ),
      ratioFigure("wildcard search, 100k names: index vs linear scan (sum of 8)", ours, linear, 5),
      atMost(
        "informal search p50, 100k names (baseline: scan of names and descriptions for the words)",
        informalSamples(index, 5),
        wordScanSamples(small, 1),
        10,
      ),
    );

    // ---- 1M names: build, cache, latency, memory ----
    const big = generateRecords(1_000_000);
    const scan = wordScanSamples(big, 1);
    const t0 = performance.now();
    const bigIndex = build(big, lexicon, digest);
    const buildMs = performance.now() - t0;
    big.length = 0;
    const file = `${dir}/1m.idx`;
    const t1 = performance.now();
    await saveIndex(file, bigIndex.data);
    const wroteMs = performance.now() - t1;
    figures.push(
      atMost(
        "informal search p50, 1M names (baseline: scan of names and descriptions for the words)",
        informalSamples(bigIndex, 3),
        scan,
        10,
      ),
      atMost("index build, 1M names (reported)", [buildMs], 0, Infinity, { goal: "reported" }),
      atMost("index cache write, 1M names (reported)", [wroteMs], 0, Infinity, {
        goal: "reported",
      }),
    );
    const empty = await childRss(
      [],
      "globalThis.gc?.(); console.log(JSON.stringify({ ms: 0, rss: Deno.memoryUsage().rss }));",
    );
    const loaded = await childRss([file, bigIndex.data.sourceId, digest], RSS_CHILD);
    const mb = (b: number) => b / 2 ** 20;
    figures.push(
      atMost("index cache load, 1M names (fresh process)", [loaded.ms], 0, Infinity, {
        goal: "reported",
      }),
      atMost(
        "agent modules + 1M index loaded: RSS vs the agent modules alone",
        [mb(loaded.rss)],
        [mb(empty.rss)],
        400,
        {
          unit: "MiB",
          digits: 0,
        },
      ),
    );
    report.push(
      `  1M names: ${bigIndex.termCount} terms, ${bigIndex.data.postings.length} postings, ` +
        `cache ${(mb((await Deno.stat(file)).size)).toFixed(0)} MiB`,
    );

    // ---- quality on both namespaces ----
    const facility = await buildIndex(simulatorIndexSource(defaultFacility()), synonyms);
    const own = (await loadQueries()).map((q) => scoreQuery(facility, q));
    const second = await secondFacilityIndex();
    const other = (await loadQueries(SECOND_QUERIES_URL)).map((q) => scoreQuery(second, q));
    for (const [label, scores] of [["simulator", own], ["second facility", other]] as const) {
      report.push(`  ${label}:`, ...qualityReport(scores));
      figures.push(...qualityFigures(label, scores));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return { figures, report };
}

if (import.meta.main) {
  const { figures, report } = await deviceIndexBench();
  console.log(report.join("\n"));
  for (const f of figures) {
    console.log(
      `${f.ok ? "ok  " : "FAIL"} ${f.name}: ${f.judged} (goal ${f.goal}; baseline ${
        f.baseline.toFixed(1)
      })`,
    );
  }
}

/** The wildcard as the regular expression a scan would test (the reference the index must equal). */
function wildcardToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(
    /\?/g,
    ".",
  );
  return new RegExp(`^${body}$`, "i");
}
