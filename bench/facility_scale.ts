/**
 * Bench figures: the simulator grown to 10^5 and 10^6 devices (`[simulator]
 * devices`). Each size runs in a child process of its own (so its memory is
 * its own), which also measures, in the same run, the default facility's
 * build and a 1,000-device batch read on it: the baselines.
 *
 * - build: building the grown namespace, against building the default one;
 * - simulator creation: the first simulator of that size (namespace, initial
 *   setpoints, optics), against the first default simulator;
 * - batch read: `read()` of 1,000 devices spread over the whole namespace,
 *   against 1,000 devices of the default facility;
 * - memory: heap held by the grown facility after a full GC, against the
 *   default facility's.
 *
 * Run alone: `deno run -A --v8-flags=--expose-gc bench/facility_scale.ts 1000000`.
 *
 * @module
 */
import { createSimulator, type Simulator } from "../src/adapters/simulator/mod.ts";
import { buildFacility } from "../src/facility/facility.ts";
import type { FacilitySpec } from "../src/facility/facility.ts";
import { buildScaledFacility } from "../src/facility/scale.ts";
import facilityJson from "../configs/devices/facility.json" with { type: "json" };
import { atMost, type Figure, median } from "./figure.ts";

/** A 1,000-device batch read on a grown facility may cost this many times the default's. */
const READ_RATIO = 4;

interface Probe {
  devices: number;
  buildMs: number[];
  baseBuildMs: number[];
  /** Creating the first simulator of this size: namespace, initial setpoints, optics. */
  startMs: number;
  baseStartMs: number;
  readMs: number[];
  baseReadMs: number[];
  heapMb: number;
  baseHeapMb: number;
  /** One walk over every device's name, description and units (what an index build reads). */
  walkMs: number;
  baseWalkMs: number;
  /** Heap still held after the walk and a GC: what the walk left behind. */
  walkKeptMb: number;
}

/** Reads what an index build reads of every device; returns ms. */
function walk(sim: Simulator): number {
  const t0 = performance.now();
  let chars = 0;
  for (const d of sim.facility.devices) {
    chars += d.name.length + d.info.description.length + d.info.units.length;
  }
  if (chars === 0) throw new Error("facility scale bench: the walk read nothing");
  return performance.now() - t0;
}

/** A batch of `n` names spread evenly over the namespace, as a tool call's JSON hands them over. */
function spread(sim: Simulator, n: number): string[] {
  const devs = sim.facility.devices;
  const names = Array.from({ length: n }, (_, i) => devs[Math.floor((i * devs.length) / n)]?.name);
  return JSON.parse(JSON.stringify(names));
}

async function reads(sim: Simulator, rounds: number): Promise<number[]> {
  const names = spread(sim, 1000);
  const out: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const got = await sim.read(names);
    out.push(performance.now() - t0);
    if (got.some((g) => !g.ok)) throw new Error("facility scale bench: a read failed");
  }
  return out;
}

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Deno.memoryUsage().heapUsed / 1e6;
}

/** Child process: measures one size against the default facility. */
async function probe(devices: number): Promise<Probe> {
  const baseBuildMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    buildFacility(facilityJson as FacilitySpec);
    baseBuildMs.push(performance.now() - t0);
  }
  const h0 = heapMb();
  let t0 = performance.now();
  const base = createSimulator({});
  const baseStartMs = performance.now() - t0;
  const baseHeapMb = heapMb() - h0;
  const buildMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    t0 = performance.now();
    buildScaledFacility(devices);
    buildMs.push(performance.now() - t0);
  }
  const h1 = heapMb();
  t0 = performance.now();
  const sim = createSimulator({ devices });
  const startMs = performance.now() - t0;
  const heap = heapMb() - h1;
  const baseWalkMs = walk(base);
  const h2 = heapMb();
  const walkMs = walk(sim);
  const walkKeptMb = heapMb() - h2;
  const readMs: number[] = [];
  const baseReadMs: number[] = [];
  await reads(sim, 3); // warm-up
  await reads(base, 3);
  for (let i = 0; i < 5; i++) {
    readMs.push(...await reads(sim, 3));
    baseReadMs.push(...await reads(base, 3));
  }
  return {
    devices: sim.deviceCount,
    buildMs,
    baseBuildMs,
    startMs,
    baseStartMs,
    readMs,
    baseReadMs,
    heapMb: heap,
    walkMs,
    baseWalkMs,
    walkKeptMb,
    baseHeapMb,
  };
}

async function run(devices: number): Promise<Probe> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL(import.meta.url).pathname,
      String(devices),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`facility scale bench: the ${devices}-device probe failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout)) as Probe;
}

/** Figures for 10^5 and 10^6 devices. */
export async function facilityScaleBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const [label, n] of [["10^5", 100_000], ["10^6", 1_000_000]] as const) {
    const p = await run(n);
    // Judged as a ratio: the machine is shared, and both reads slow down together.
    const ratio = median(p.readMs) / median(p.baseReadMs);
    const read: Figure = {
      name: `1,000-device batch read, ${label} devices (baseline: default facility)`,
      value: median(p.readMs),
      baseline: median(p.baseReadMs),
      judged: `${ratio.toFixed(1)}× baseline (${median(p.readMs).toFixed(1)} ms)`,
      goal: `≤ ${READ_RATIO}× baseline`,
      ok: ratio <= READ_RATIO,
    };
    const build = atMost(
      `facility build, ${p.devices} devices (baseline: default facility)`,
      p.buildMs,
      p.baseBuildMs,
      n === 100_000 ? 500 : 3000,
      { digits: 0 },
    );
    build.judged += ` (${(median(p.buildMs) / median(p.baseBuildMs)).toFixed(1)}× baseline)`;
    const start = atMost(
      `simulator creation, ${p.devices} devices (baseline: default facility)`,
      [p.startMs],
      p.baseStartMs,
      n === 100_000 ? 1000 : 5000,
      { digits: 0 },
    );
    start.judged += ` (${(p.startMs / p.baseStartMs).toFixed(1)}× baseline)`;
    figures.push(read, build, start);
    if (n === 1_000_000) {
      const walked = atMost(
        `walk of every device's name, description, units, ${p.devices} devices (baseline: default)`,
        [p.walkMs],
        p.baseWalkMs,
        5000,
        { digits: 0 },
      );
      walked.judged += `, ${p.walkKeptMb.toFixed(1)} MB kept after it`;
      figures.push(walked);
      figures.push(
        atMost(
          `facility heap, ${p.devices} devices (baseline: default)`,
          [p.heapMb],
          p.baseHeapMb,
          200,
          {
            unit: "MB",
          },
        ),
      );
    }
  }
  return figures;
}

if (import.meta.main) {
  const n = Number(Deno.args[0]);
  if (Number.isFinite(n)) console.log(JSON.stringify(await probe(n)));
  else {for (const f of await facilityScaleBench()) {
      console.log(`${f.name}: ${f.judged}, goal ${f.goal}`);
    }}
}
