/**
 * Where plot data comes from: the archive (devices over a time range), live
 * reads sampled for a short time, a plan's scan (the CSV the executor
 * recorded in the state directory's `scans/`), and CSV files in the
 * sandbox's work directory. Every failure the caller can fix is a
 * {@link PlotError} of one line.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";
import type { ControlReader } from "../adapters/adapter.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { normalize } from "../config/paths.ts";
import { sleep, type Timers } from "../util/misc.ts";
import { resolveRange } from "../util/time_range.ts";
import type { PlotData, PlotSeries } from "./data.ts";
import { parseCsv, PlotError } from "./csv.ts";

/** Largest CSV file read. */
export const MAX_CSV_BYTES = 20 * 1024 * 1024;
/** Live sampling: at most this long, and this many samples. */
export const MAX_LIVE_MS = 10 * 60_000;
export const MAX_LIVE_SAMPLES = 600;
/** Points asked of the archive per device (server-side binning). */
const ARCHIVE_POINTS = 2_000;

/** Archived series of `devices` between `from` and `to` (default: the last 24 hours). */
export async function archiveData(
  cs: ControlReader,
  q: { devices: string[]; from?: string; to?: string },
  nowMs: number,
  signal?: AbortSignal,
): Promise<{ data: PlotData; errors: { device: string; error: string }[] }> {
  let range;
  try {
    range = resolveRange(q.from, q.to, nowMs);
  } catch (e) {
    throw new PlotError(errorMessage(e));
  }
  const got = await cs.archive({ ...range, devices: q.devices, maxPoints: ARCHIVE_POINTS }, signal);
  const errors: { device: string; error: string }[] = [];
  const series: PlotSeries[] = [];
  for (const s of got) {
    if (!s.ok) {
      errors.push({ device: s.device, error: s.error ?? "not archived" });
      continue;
    }
    const points = s.samples.flatMap((p): [number, number][] =>
      typeof p.value === "number" && Number.isFinite(p.value) ? [[Date.parse(p.time), p.value]] : []
    );
    if (!points.length) {
      errors.push({ device: s.device, error: "no numeric samples in the range" });
      continue;
    }
    series.push({ name: s.device, units: s.units, points });
  }
  if (!series.length) {
    throw new PlotError(
      `nothing to plot: ${errors.map((e) => `${e.device}: ${e.error}`).join("; ")}`,
    );
  }
  return {
    data: {
      title: `archive ${range.from} → ${range.to}`,
      xKind: "time",
      xLabel: "time (UTC)",
      series,
    },
    errors,
  };
}

/** Live values of `devices`, read every `everyMs` for `forMs` (both bounded). */
export async function liveData(
  cs: ControlReader,
  q: { devices: string[]; forMs: number; everyMs: number },
  nowMs: () => number,
  signal?: AbortSignal,
  timers?: Timers,
): Promise<{ data: PlotData; errors: { device: string; error: string }[] }> {
  if (!(q.forMs > 0 && q.forMs <= MAX_LIVE_MS)) {
    throw new PlotError(`live sampling lasts more than 0 s and at most ${MAX_LIVE_MS / 1000} s`);
  }
  if (!(q.everyMs >= 100 && q.everyMs <= q.forMs)) {
    throw new PlotError("the sampling interval is at least 0.1 s and at most the whole duration");
  }
  const samples = Math.floor(q.forMs / q.everyMs) + 1;
  if (samples > MAX_LIVE_SAMPLES) {
    throw new PlotError(
      `${samples} samples; at most ${MAX_LIVE_SAMPLES}: sample less often or for less time`,
    );
  }
  const series = new Map<string, PlotSeries>(
    q.devices.map((d) => [d, { name: d, units: "", points: [] }]),
  );
  const errors = new Map<string, string>();
  for (let i = 0; i < samples; i++) {
    if (i > 0) await sleep(q.everyMs, signal, timers);
    const readings = await cs.read(q.devices, signal);
    const at = nowMs();
    for (const r of readings) {
      const s = series.get(r.device);
      if (!s) continue;
      if (!r.ok) errors.set(r.device, r.error ?? "read failed");
      else if (typeof r.value === "number" && Number.isFinite(r.value)) {
        s.units = r.units;
        s.points.push([at, r.value]);
      } else errors.set(r.device, "not a number");
    }
  }
  const kept = [...series.values()].filter((s) => s.points.length);
  if (!kept.length) {
    throw new PlotError(
      `nothing to plot: ${[...errors].map(([d, e]) => `${d}: ${e}`).join("; ")}`,
    );
  }
  return {
    data: {
      title: `live, every ${q.everyMs / 1000} s for ${q.forMs / 1000} s`,
      xKind: "time",
      xLabel: "time (UTC)",
      series: kept,
    },
    errors: [...errors].filter(([d]) => !series.get(d)?.points.length)
      .map(([device, error]) => ({ device, error })),
  };
}

/**
 * A plan's scan: `ref` is a scan file's name (as a plan's result lists it)
 * or a plan hash prefix (the newest scan of that plan). The setpoint is the
 * x axis; the readback and the devices read are the series.
 */
export async function scanData(
  cs: ControlReader,
  scansDir: string,
  ref: string,
  signal?: AbortSignal,
  columns?: string[],
): Promise<PlotData> {
  const name = ref.slice(ref.lastIndexOf("/") + 1);
  let file: string | undefined;
  if (/^scan-[\w.-]+\.csv$/.test(name)) {
    file = name;
  } else if (/^[0-9a-f]{6,64}$/.test(ref)) {
    const found: string[] = [];
    try {
      for await (const e of Deno.readDir(scansDir)) {
        if (e.isFile && e.name.startsWith(`scan-${ref.slice(0, 12)}`)) found.push(e.name);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    file = found.sort().at(-1);
    if (!file) throw new PlotError(`no scan of a plan ${ref} in ${scansDir}`);
  } else {
    throw new PlotError(
      `scan "${ref}" is neither a scan file's name (scan-….csv) nor a plan hash`,
    );
  }
  const data = await csvText(`${scansDir}/${file}`, file, { x: 1, skip: [0], columns });
  // The scan file has no units; the devices' descriptions do.
  try {
    const info = await cs.describe(
      data.series.map((s) => s.name.replace(/:readback$/, "")),
      signal,
    );
    data.series.forEach((s, i) => s.units = info[i]?.exists ? info[i].units : "");
  } catch {
    // Units are a nicety; the data stands without them.
  }
  return { ...data, title: `scan ${file}` };
}

/**
 * A CSV file in the sandbox's work directory: `path` relative to it (or
 * absolute inside it). A path that leaves it (`..`, a symlink) is refused.
 */
export async function csvData(
  workDir: string,
  path: string,
  columns?: string[],
): Promise<PlotData> {
  const outside = () =>
    new PlotError(`${path}: not inside the work directory ${workDir}; plot files from there`);
  const full = normalize(path.startsWith("/") ? path : `${workDir}/${path}`);
  if (!full.startsWith(`${normalize(workDir)}/`)) throw outside();
  let real: string;
  let root: string;
  try {
    root = await Deno.realPath(workDir);
    real = await Deno.realPath(full);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new PlotError(`${path}: no such file in the work directory ${workDir}`);
    }
    // A link that leads where the program may not read is outside by definition.
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw outside();
    }
    throw new PlotError(`${path}: cannot be read (${errorMessage(e).split("\n")[0]})`);
  }
  if (!real.startsWith(`${root}/`)) throw outside();
  return await csvText(real, path, { columns });
}

async function csvText(
  path: string,
  shown: string,
  choice: Parameters<typeof parseCsv>[2],
): Promise<PlotData> {
  let text: string;
  try {
    text = await readRegularText(path, MAX_CSV_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new PlotError(`${shown}: no such file`);
    throw new PlotError(`${shown}: ${errorMessage(e).split("\n")[0]}`);
  }
  if (text.includes("\0")) throw new PlotError(`${shown}: not a text file`);
  return parseCsv(text, shown, choice);
}
