/**
 * Archiver Appliance retrieval (spec §d): getData.json with server-side
 * `mean_N` binning chosen to stay under a point budget, lenient parsing of
 * the bare NaN/Infinity tokens its serializer writes, 404 as "not archived";
 * and getMatchingPVs, the name search used when no ChannelFinder is set.
 *
 * The appliance also returns the last sample from before `from` (a PV
 * archived on change may have none inside the window): it becomes the value
 * held at `from`, stamped `from` with its own time as `since` (raw data
 * only: a bin's start says nothing of when the value was set). Enum samples
 * carry the state's index; the `ENUM_n` labels in `meta` turn it into the
 * state's name, as a live read shows it. Enums are never binned: a mean of
 * indices names no state.
 *
 * @module
 */
import type { ArchiveQuery, Sample, Series } from "../adapter.ts";
import { type HttpService, HttpStatusError, httpText, query } from "../http.ts";
import { jsonReply, shaped } from "../reply.ts";
import { severityFromNumber } from "./normalise.ts";
import { type ArchiverEvent, GetDataSchema, MatchingPvsSchema } from "./shapes.ts";
import { errorMessage } from "../../util/errors.ts";

/**
 * The post-processed PV name for a time span and point budget: raw data
 * when the span holds no more seconds than points, otherwise `mean_N` with
 * N seconds per bin so the bins fit the budget.
 */
export function binnedName(pv: string, fromMs: number, toMs: number, maxPoints: number): string {
  const spanS = Math.max(1, (toMs - fromMs) / 1000);
  if (spanS <= maxPoints) return pv;
  return `mean_${Math.ceil(spanS / maxPoints)}(${pv})`;
}

/** Archived history of each device; one device's failure does not fail the others. */
export async function archiverData(
  svc: HttpService,
  q: ArchiveQuery,
  signal?: AbortSignal,
): Promise<Series[]> {
  const fromMs = Date.parse(q.from), toMs = Date.parse(q.to);
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) {
    throw new RangeError(`archive time range "${q.from}".."${q.to}" is not ISO-8601`);
  }
  const budget = Math.max(1, q.maxPoints ?? 2000);
  return await Promise.all(q.devices.map(async (device): Promise<Series> => {
    try {
      return await oneSeries(svc, device, fromMs, toMs, budget, signal);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      const error = e instanceof HttpStatusError && e.status === 404
        ? `not archived: the archiver has no PV "${device}"`
        : errorMessage(e);
      return { device, units: "", samples: [], ok: false, error };
    }
  }));
}

async function oneSeries(
  svc: HttpService,
  device: string,
  fromMs: number,
  toMs: number,
  budget: number,
  signal?: AbortSignal,
): Promise<Series> {
  const range = { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
  const name = binnedName(device, fromMs, toMs, budget);
  let answer: { meta: Record<string, unknown>; events: ArchiverEvent[] };
  /** Whether the answer is `mean_N` bins, not the PV's own samples. */
  let binned = name !== device;
  try {
    answer = parseAnswer(svc, await getData(svc, name, range, signal));
  } catch (e) {
    // Means of strings or enums are refused by some appliances: ask for raw data once.
    if (!binned || !(e instanceof HttpStatusError) || e.status === 404) throw e;
    answer = parseAnswer(svc, await getData(svc, device, range, signal));
    binned = false;
  }
  let labels = enumLabels(answer.meta);
  if (labels && binned) {
    // A mean of enum indices is no state at all (between Shutdown and User is not "No Beam"):
    // an enum's history is its raw changes, thinned below.
    answer = parseAnswer(svc, await getData(svc, device, range, signal));
    labels = enumLabels(answer.meta);
    binned = false;
  }
  const { meta, events } = answer;
  const samples: Sample[] = [];
  /** The latest event from before the window (its sample, or none when not finite). */
  let held: { ms: number; sample?: Sample } | undefined;
  /** The first event inside the window, finite or not. */
  let firstInWindowMs = Infinity;
  for (const ev of events) {
    if (typeof ev.secs !== "number") continue;
    const ms = ev.secs * 1000 + Math.floor((typeof ev.nanos === "number" ? ev.nanos : 0) / 1e6);
    if (ms >= toMs) continue;
    const value = sampleValue(ev.val, labels);
    const sample = value === undefined ? undefined : {
      time: new Date(ms).toISOString(),
      value,
      severity: severityFromNumber(ev.severity),
    };
    if (ms >= fromMs) {
      firstInWindowMs = Math.min(firstInWindowMs, ms);
      if (sample) samples.push(sample);
    } else if (!held || ms >= held.ms) held = { ms, ...(sample ? { sample } : {}) };
  }
  // What the PV held at `from`, unless the window has its own sample there (or the held one was NaN).
  if (held?.sample && firstInWindowMs > fromMs) {
    // A bin's mean was set by no one: only a raw sample says when the value was archived.
    samples.unshift({
      ...held.sample,
      time: new Date(fromMs).toISOString(),
      ...(binned ? {} : { since: held.sample.time }),
    });
  }
  return {
    device,
    units: typeof meta.EGU === "string" ? meta.EGU : "",
    samples: thin(samples, budget),
    ok: true,
  };
}

/** The first (only) PV's meta and events of a getData.json answer. */
function parseAnswer(
  svc: HttpService,
  body: unknown,
): { meta: Record<string, unknown>; events: ArchiverEvent[] } {
  const [first] = shaped(svc, GetDataSchema, body, "a list of {meta, data} with numeric secs");
  return { meta: first?.meta ?? {}, events: first?.data ?? [] };
}

async function getData(
  svc: HttpService,
  pv: string,
  range: { from: string; to: string },
  signal?: AbortSignal,
): Promise<unknown> {
  const { text, status } = await httpText(svc, `/data/getData.json${query({ pv, ...range })}`, {
    signal,
  });
  return text.trim() ? jsonReply(svc, text, status, true) : [];
}

/** `ENUM_0`, `ENUM_1`… of an enum PV's meta, by index; undefined for other PVs. */
function enumLabels(meta: Record<string, unknown>): string[] | undefined {
  const labels: string[] = [];
  for (const [key, label] of Object.entries(meta)) {
    const m = /^ENUM_(\d+)$/.exec(key);
    if (m && typeof label === "string") labels[Number(m[1])] = label;
  }
  return labels.length ? labels : undefined;
}

/**
 * Numbers, strings and waveforms; an enum's index becomes its label (an
 * index without one, or a binned mean between states, stays a number).
 * Non-finite samples (parsed as null) are left out.
 */
function sampleValue(v: unknown, labels?: string[]): Sample["value"] | undefined {
  if (typeof v === "number" && labels && Number.isInteger(v)) return labels[v] ?? v;
  if (typeof v === "number" || typeof v === "string") return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === "number" ? x : NaN));
  return undefined;
}

/** Keeps at most `budget` samples, evenly spaced, first and last included. */
function thin(samples: Sample[], budget: number): Sample[] {
  if (samples.length <= budget) return samples;
  const out: Sample[] = [];
  const step = (samples.length - 1) / Math.max(1, budget - 1);
  for (let i = 0; i < budget; i++) {
    const s = samples[Math.round(i * step)];
    if (s) out.push(s);
  }
  return out;
}

/** Archived PV names matching a glob, sorted (getMatchingPVs; all of them, for an exact total). */
export async function matchingPvs(
  svc: HttpService,
  glob: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const { text, status } = await httpText(
    svc,
    `/bpl/getMatchingPVs${query({ pv: glob, limit: -1 })}`,
    { signal },
  );
  const body = jsonReply(svc, text, status, true);
  return shaped(svc, MatchingPvsSchema, body, "a list of PV names").sort();
}
