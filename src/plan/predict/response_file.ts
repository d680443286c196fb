/**
 * A facility's measured response, as a file in `[prediction] response_dir`
 * (docs/prediction.md): the change of each output device per unit change of
 * each input device, with names, units and the date measured. An orbit
 * response matrix (BPMs per corrector), a tune response (tunes per
 * quadrupole family) and a dispersion response (BPMs per RF frequency) are
 * all this one shape. JSON:
 *
 * ```json
 * { "name": "ring orbit response", "measured": "2026-11-20T08:00:00Z",
 *   "inputs": [{ "device": "SR:COR:H01:SETPT", "units": "A" }],
 *   "outputs": [{ "device": "SR:BPM:01:X", "units": "mm" }],
 *   "response": [[0.8]] }
 * ```
 *
 * `response[i][j]` is output i's change per unit of input j. Every file is
 * checked whole before it is used: a file that is not a regular file (a
 * FIFO, a device), too large, not JSON, with a key not listed, a name that
 * is not one, a repeated device, a matrix of the wrong shape, a value that
 * is not a finite number or beyond ±1e6, or a date that is not one or lies
 * in the future is refused in one line naming the file and what to fix.
 *
 * @module
 */
import { z } from "zod";
import { readRegularText } from "../../util/bounded_read.ts";

/** Largest response file read. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Most files read from the directory. */
export const MAX_RESPONSE_FILES = 64;
/** Largest magnitude of one response coefficient. */
const MAX_COEFFICIENT = 1e6;
/** Most entries of one matrix. */
const MAX_ENTRIES = 2_000_000;
/** A measurement dated this far ahead of the clock is "in the future". */
const FUTURE_SLACK_MS = 5 * 60_000;

const DEVICE = z.string().min(1).max(256).regex(
  /^[\x21-\x7e]+$/,
  "a device name of printable ASCII",
);
const Endpoint = z.strictObject({ device: DEVICE, units: z.string().max(32) });

const FileSchema = z.strictObject({
  name: z.string().min(1).max(200),
  measured: z.string().min(1).max(64),
  inputs: z.array(Endpoint).min(1).max(10_000),
  outputs: z.array(Endpoint).min(1).max(100_000),
  response: z.array(z.array(z.unknown())),
});

/** One checked response file. */
export interface ResponseFile {
  /** The file's name in the directory. */
  file: string;
  name: string;
  /** ISO date measured, and ms since the epoch. */
  measured: string;
  measuredMs: number;
  inputs: { device: string; units: string }[];
  outputs: { device: string; units: string }[];
  /** Row-major: `response[i * inputs.length + j]`. */
  response: Float64Array;
}

/** A response file that cannot be used, said in one line. */
export class ResponseFileError extends Error {
  override name = "ResponseFileError";
}

/** Every `.json` file of `dir`, checked, in name order. */
export async function loadResponseFiles(dir: string, now: number): Promise<ResponseFile[]> {
  let names: string[];
  try {
    names = [];
    for await (const e of Deno.readDir(dir)) {
      if (e.name.endsWith(".json")) names.push(e.name);
      if (names.length > MAX_RESPONSE_FILES) {
        throw new ResponseFileError(
          `${dir} holds more than ${MAX_RESPONSE_FILES} response files; keep the ones in use`,
        );
      }
    }
  } catch (e) {
    if (e instanceof ResponseFileError) throw e;
    throw new ResponseFileError(
      `the response directory ${dir} cannot be read (${e instanceof Error ? e.message : e}); ` +
        "check [prediction] response_dir",
    );
  }
  if (!names.length) {
    throw new ResponseFileError(`the response directory ${dir} holds no .json response file`);
  }
  names.sort();
  const files: ResponseFile[] = [];
  for (const name of names) {
    const path = `${dir}/${name}`;
    let text: string;
    try {
      text = await readRegularText(path, MAX_RESPONSE_BYTES);
    } catch (e) {
      throw new ResponseFileError(
        `response file ${name}: ${e instanceof Error ? e.message : e}`,
      );
    }
    files.push(parseResponseFile(name, text, now));
  }
  return files;
}

/** One file's text, checked whole; throws {@link ResponseFileError} naming the file and the fault. */
export function parseResponseFile(file: string, text: string, now: number): ResponseFile {
  const bad = (what: string) =>
    new ResponseFileError(`response file ${file}: ${what}; fix the file (docs/prediction.md)`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw bad(`not JSON (${e instanceof Error ? e.message : e})`);
  }
  const parsed = FileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw bad(`${issue?.path.join(".") || "the file"}: ${issue?.message ?? "not a response file"}`);
  }
  const f = parsed.data;
  const measuredMs = Date.parse(f.measured);
  if (!Number.isFinite(measuredMs)) throw bad(`measured "${f.measured}" is not a date`);
  if (measuredMs > now + FUTURE_SLACK_MS) throw bad(`measured ${f.measured} is in the future`);
  for (const [list, label] of [[f.inputs, "inputs"], [f.outputs, "outputs"]] as const) {
    const seen = new Set<string>();
    for (const { device } of list) {
      if (seen.has(device)) throw bad(`${label} names ${device} twice`);
      seen.add(device);
    }
  }
  const n = f.outputs.length, m = f.inputs.length;
  if (n * m > MAX_ENTRIES) throw bad(`a ${n}×${m} matrix is larger than ${MAX_ENTRIES} entries`);
  if (f.response.length !== n) {
    throw bad(`response has ${f.response.length} rows for ${n} outputs`);
  }
  const response = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    const row = f.response[i] as unknown[];
    if (row.length !== m) throw bad(`response row ${i} has ${row.length} values for ${m} inputs`);
    for (let j = 0; j < m; j++) {
      const v = row[j];
      if (typeof v !== "number" || !Number.isFinite(v) || Math.abs(v) > MAX_COEFFICIENT) {
        throw bad(
          `response[${i}][${j}] (${f.outputs[i]?.device} per ${f.inputs[j]?.device}) is ` +
            `${JSON.stringify(v)}, not a finite number within ±${MAX_COEFFICIENT}`,
        );
      }
      response[i * m + j] = v;
    }
  }
  return {
    file,
    name: f.name,
    measured: new Date(measuredMs).toISOString(),
    measuredMs,
    inputs: f.inputs,
    outputs: f.outputs,
    response,
  };
}
