/**
 * The prediction on EPICS and TANGO: a linear model from the facility's
 * response files (`response_file.ts`), read afresh for every prediction
 * (the facility measures and refreshes them). Each output device starts at
 * its live reading and moves by the response to each written input's
 * change, step by step along the plan's path (writes, scan points, then the
 * rollback or the restores). WAITs change nothing in a linear model.
 *
 * The watched devices are the outputs of every file that has a written
 * device as an input; their alarm thresholds are the control system's
 * (HIHI/HIGH/LOW/LOLO where the gateway serves them), else the config's
 * `[prediction.watch]` by pattern, which also gives a device's noise. A
 * written device no file covers is named (`uncovered`). A file whose
 * devices the control system does not have, or whose units differ from the
 * control system's, cannot be used: the model says so in one line.
 *
 * @module
 */
import type {
  AlarmLimits,
  ControlReader,
  DeviceInfo,
  Severity,
  Value,
} from "../../adapters/adapter.ts";
import type { MadePrediction, ModelSource, Prediction } from "../../plan_model/prediction.ts";
import { type PathEvent, planPath, writtenOn } from "./path.ts";
import { loadResponseFiles, type ResponseFile, ResponseFileError } from "./response_file.ts";
import { type Reads, Tracker, type Watched } from "./track.ts";
import {
  checkDeadline,
  MAX_OBSERVED,
  MOVED_SHOWN,
  type PredictInput,
  type ResponseModel,
} from "./types.ts";

/** Thresholds and noise the config gives watched devices, by pattern (`*`, `?`). */
export interface WatchRule {
  lolo?: number;
  low?: number;
  high?: number;
  hihi?: number;
  noise?: number;
}

export interface LinearOptions {
  /** The directory of response files. */
  dir: string;
  cs: Pick<ControlReader, "read" | "describe">;
  watch: Record<string, WatchRule>;
  maxAgeDays: number;
  now(): number;
}

export class LinearResponse implements ResponseModel {
  constructor(private readonly o: LinearOptions) {}

  async predict(input: PredictInput): Promise<Prediction> {
    const now = this.o.now();
    const files = await loadResponseFiles(this.o.dir, now);
    checkDeadline(input);
    const path = planPath(input.plan, input.live, input.limits);
    const written = writtenOn(path);
    const used = files.filter((f) => f.inputs.some((i) => written.includes(i.device)));
    const covered = new Set(used.flatMap((f) => f.inputs.map((i) => i.device)));
    const uncovered = written.filter((d) => !covered.has(d));
    const outputs = [...new Set(used.flatMap((f) => f.outputs.map((o) => o.device)))];
    const inputs = [...covered].filter((d) => written.includes(d));
    const [infos, start] = await Promise.all([
      this.o.cs.describe([...outputs, ...inputs], input.signal),
      this.o.cs.read(outputs, input.signal),
    ]);
    checkDeadline(input);
    checkNames(used, new Map(infos.map((d) => [d.device, d])));
    const rules = Object.entries(this.o.watch).map(([p, r]) => ({ re: globRe(p), r }));
    const watched: Watched[] = outputs.map((device, i) => {
      const info = infos[i];
      const rule = rules.find(({ re }) => re.test(device))?.r;
      const alarm = { ...info?.alarm, ...thresholds(rule) };
      return {
        device,
        units: info?.units ?? "",
        noise: rule?.noise ?? 0,
        ...(Object.keys(alarm).length ? { alarm } : {}),
      };
    });
    const values = start.map((r) => (r.ok && typeof r.value === "number" ? r.value : null));
    const tracker = new Tracker(watched, readsAt(values, watched));
    const warnings = walk(path, input, columns(used, outputs, written), values, tracker, now);
    const models = sources(used, now);
    for (const m of models) {
      if ((m.ageDays ?? 0) > this.o.maxAgeDays) {
        warnings.push(
          `the response file ${m.name} was measured ${Math.floor(m.ageDays ?? 0)} days ago, ` +
            `longer than [prediction] max_age_days (${this.o.maxAgeDays}): measure it again`,
        );
      }
    }
    const floor = (i: number) =>
      input.policy.deviationSigmas * Math.SQRT2 * (watched[i]?.noise ?? 0);
    const chosen = tracker.observable(MAX_OBSERVED, floor);
    const observe = tracker.observationPlan(
      chosen,
      chosen.map(floor),
      input.policy.deviationRelative,
    );
    const made: MadePrediction = {
      status: "predicted",
      source: `response files in ${this.o.dir}`,
      models,
      madeAt: new Date(now).toISOString(),
      worst: tracker.worst(),
      moved: tracker.moved(MOVED_SHOWN),
      watched: outputs.length,
      uncovered,
      warnings,
      ...(observe ? { observe } : {}),
    };
    return made;
  }
}

/** Each written device's columns: the file, the watched index of each of its outputs, its input. */
type Columns = Map<string, { file: ResponseFile; row: number[]; j: number }[]>;

function columns(used: ResponseFile[], outputs: string[], written: string[]): Columns {
  const col: Columns = new Map();
  for (const f of used) {
    const rows = f.outputs.map((o) => outputs.indexOf(o.device));
    f.inputs.forEach((inp, j) => {
      if (!written.includes(inp.device)) return;
      col.set(inp.device, [...(col.get(inp.device) ?? []), { file: f, row: rows, j }]);
    });
  }
  return col;
}

/** Walks the path, moving the outputs by each write's change; returns the warnings. */
function walk(
  path: PathEvent[],
  input: PredictInput,
  col: Columns,
  values: (number | null)[],
  tracker: Tracker,
  now: number,
): string[] {
  const warnings: string[] = [];
  const setting = new Map<string, Value | null>(
    [...col.keys()].map((d) => [d, input.live[d] ?? null]),
  );
  const at = values.slice();
  for (const e of path) {
    checkDeadline(input);
    if (e.kind === "write" && col.has(e.device)) {
      const before = setting.get(e.device);
      setting.set(e.device, e.value);
      if (typeof before === "number" && typeof e.value === "number") {
        const delta = e.value - before;
        for (const { file, row, j } of col.get(e.device) ?? []) {
          const m = file.inputs.length;
          row.forEach((k, i) => {
            const v = at[k];
            if (v !== null && v !== undefined) {
              at[k] = v + (file.response[i * m + j] as number) * delta;
            }
          });
        }
      } else {
        warnings.push(
          `${e.device}'s value before ${e.label} is not a number: its response is not predicted`,
        );
      }
    }
    if (e.sample) {
      tracker.record(
        { label: e.label, key: e.sample, after: e.after, time: now },
        readsAt(at, tracker.watched),
      );
    }
  }
  return warnings;
}

/** The files a prediction used, with the date each was measured and its age. */
function sources(used: ResponseFile[], now: number): ModelSource[] {
  return used.map((f) => ({
    name: f.file,
    measured: f.measured,
    ageDays: Math.max(0, (now - f.measuredMs) / 86_400_000),
  }));
}

/** A file's devices must exist on the control system, in the units the file gives. */
function checkNames(files: ResponseFile[], infos: Map<string, DeviceInfo>): void {
  for (const f of files) {
    for (const { device, units } of [...f.inputs, ...f.outputs]) {
      const info = infos.get(device);
      if (!info) continue; // an input the plan does not write: not asked
      if (!info.exists) {
        throw new ResponseFileError(
          `response file ${f.file} names ${device}, which the control system does not have; ` +
            "fix the file (docs/prediction.md)",
        );
      }
      if (info.units && units && info.units !== units) {
        throw new ResponseFileError(
          `response file ${f.file} gives ${device} in ${units}, the control system in ` +
            `${info.units}; fix the file (docs/prediction.md)`,
        );
      }
    }
  }
}

function thresholds(r: WatchRule | undefined): AlarmLimits {
  const out: AlarmLimits = {};
  if (r?.lolo !== undefined) out.lolo = r.lolo;
  if (r?.low !== undefined) out.low = r.low;
  if (r?.high !== undefined) out.high = r.high;
  if (r?.hihi !== undefined) out.hihi = r.hihi;
  return out;
}

/** The severity and status a value has against its thresholds. */
export function judge(v: number | null, a: AlarmLimits | undefined): [Severity, string] {
  if (v === null || !a) return ["NONE", "NO_ALARM"];
  if (a.hihi !== undefined && v >= a.hihi) return ["MAJOR", "HIHI"];
  if (a.lolo !== undefined && v <= a.lolo) return ["MAJOR", "LOLO"];
  if (a.high !== undefined && v >= a.high) return ["MINOR", "HIGH"];
  if (a.low !== undefined && v <= a.low) return ["MINOR", "LOW"];
  return ["NONE", "NO_ALARM"];
}

function readsAt(values: (number | null)[], watched: Watched[]): Reads {
  const judged = values.map((v, i) => judge(v, watched[i]?.alarm));
  return {
    values: values.slice(),
    severity: judged.map(([s]) => s),
    status: judged.map(([, s]) => s),
  };
}

function globRe(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(
    /\?/g,
    ".",
  );
  return new RegExp(`^${body}$`);
}
