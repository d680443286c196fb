/**
 * The engine comparison behind docs/device-index.md: the purpose-built index
 * against two kept npm search libraries (minisearch, flexsearch) on build
 * time, memory, informal query latency at 10^5 and 10^6 names, and quality
 * on the labelled operator queries. Each engine and size runs in its own
 * process so memory figures do not mix.
 *
 *     deno run -A bench/index_engines.ts            # every engine at 100k and 1M, then quality
 *     deno run -A bench/index_engines.ts 100000     # one size
 *
 * @module
 */
import MiniSearch from "minisearch";
import FlexSearch from "flexsearch";
import { IndexBuilder } from "../src/index/builder.ts";
import { DeviceIndex, Lexicon, lexiconDigest, rankedSearch } from "../src/index/mod.ts";
import { loadSynonyms } from "../src/index/synonyms.ts";
import type { IndexRecord } from "../src/index/record.ts";
import { simulatorIndexSource } from "../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../src/facility/facility.ts";
import { loadQueries } from "../tests/index/quality.ts";
import { BENCH_QUERIES, generateRecords } from "./index_names.ts";
import { median } from "./figure.ts";

type Engine = "index" | "minisearch" | "flexsearch";
const ENGINES: Engine[] = ["index", "minisearch", "flexsearch"];

/** Ranked names for a query, at most `k`. */
type Search = (q: string, k: number) => string[];

type Doc = {
  id: number;
  name: string;
  description: string;
  props: string;
  [key: string]: string | number;
};

function docs(records: IndexRecord[]): Doc[] {
  return records.map((r, id) => ({
    id,
    name: r.name.split(/[:._/-]/).join(" "),
    description: r.description,
    props: [...Object.values(r.properties), ...r.tags].join(" "),
  }));
}

async function build(engine: Engine, records: IndexRecord[]): Promise<Search> {
  const names = records.map((r) => r.name);
  switch (engine) {
    case "index": {
      const synonyms = await loadSynonyms();
      const lexicon = new Lexicon(synonyms);
      const b = new IndexBuilder(lexicon, "bench", lexiconDigest(synonyms));
      for (const r of records) b.add(r);
      const index = new DeviceIndex(b.finish(), lexicon);
      return (q, k) => rankedSearch(index, q, { limit: k }).devices.map((d) => d.name);
    }
    case "minisearch": {
      const ms = new MiniSearch<Doc>({
        fields: ["name", "description", "props"],
        storeFields: [],
        searchOptions: { boost: { name: 3, props: 2 }, fuzzy: 0.2, prefix: true },
      });
      ms.addAll(docs(records));
      return (q, k) => ms.search(q).slice(0, k).map((r) => names[r.id as number] ?? "");
    }
    case "flexsearch": {
      const fx = new FlexSearch.Document({
        document: { id: "id", index: ["name", "description", "props"] },
        tokenize: "forward",
      });
      for (const d of docs(records)) fx.add(d);
      return (q, k) =>
        (fx.search(q, { limit: k, merge: true }) as unknown as { id: number }[])
          .slice(0, k).map((r) => names[r.id] ?? "");
    }
  }
}

function rss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Deno.memoryUsage().rss;
}

/** Child: one engine at one size (0 = quality on the default facility). */
async function child(engine: Engine, n: number): Promise<Record<string, number>> {
  if (n === 0) {
    const facility = defaultFacility();
    const records: IndexRecord[] = [];
    for await (const page of simulatorIndexSource(facility).records()) records.push(...page);
    const search = await build(engine, records);
    const out: Record<string, number> = {};
    for (const held of [false, true]) {
      const qs = (await loadQueries()).filter((q) => q.held_out === held);
      let sum = 0;
      for (const q of qs) {
        const res = q.expect.map((g) =>
          new RegExp(
            `^${g.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`,
          )
        );
        const correct = records.filter((r) => res.some((re) => re.test(r.name))).length;
        const k = Math.min(20, correct);
        const top = search(q.text, k);
        sum += top.filter((name) => res.some((re) => re.test(name))).length / k;
      }
      out[held ? "heldBack" : "tuning"] = sum / qs.length;
    }
    return out;
  }
  const records = generateRecords(n);
  const before = rss();
  const t0 = performance.now();
  const search = await build(engine, records);
  const buildMs = performance.now() - t0;
  const after = rss();
  search(BENCH_QUERIES[0] ?? "", 20);
  const samples: number[] = [];
  for (let i = 0; i < (n >= 1_000_000 ? 1 : 5); i++) {
    for (const q of BENCH_QUERIES) {
      const t = performance.now();
      search(q, 20);
      samples.push(performance.now() - t);
    }
  }
  return {
    buildMs,
    memMiB: (after - before) / 2 ** 20,
    p50: median(samples),
    max: Math.max(...samples),
  };
}

async function runChild(engine: Engine, n: number): Promise<Record<string, number> | string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc,--max-old-space-size=12000",
      import.meta.filename ?? "",
      "--child",
      engine,
      String(n),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    return `failed: ${new TextDecoder().decode(out.stderr).split("\n").slice(-3).join(" ")}`;
  }
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

if (import.meta.main) {
  if (Deno.args[0] === "--child") {
    console.log(JSON.stringify(await child(Deno.args[1] as Engine, Number(Deno.args[2]))));
  } else {
    const sizes = Deno.args.length ? Deno.args.map(Number) : [100_000, 1_000_000];
    console.log("| engine | names | build (s) | memory (MiB) | query p50 (ms) | query max (ms) |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (const n of sizes) {
      for (const e of ENGINES) {
        const r = await runChild(e, n);
        if (typeof r === "string") console.log(`| ${e} | ${n} | ${r} | | | |`);
        else {
          console.log(
            `| ${e} | ${n} | ${((r.buildMs ?? 0) / 1000).toFixed(1)} | ${
              (r.memMiB ?? 0).toFixed(0)
            } | ${(r.p50 ?? 0).toFixed(2)} | ${(r.max ?? 0).toFixed(1)} |`,
          );
        }
      }
    }
    console.log("\n| engine | precision@k, tuning set | precision@k, held-back set |");
    console.log("| --- | ---: | ---: |");
    for (const e of ENGINES) {
      const r = await runChild(e, 0);
      if (typeof r === "string") console.log(`| ${e} | ${r} | |`);
      else {console.log(
          `| ${e} | ${(r.tuning ?? 0).toFixed(3)} | ${(r.heldBack ?? 0).toFixed(3)} |`,
        );}
    }
  }
}
