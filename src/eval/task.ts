/**
 * An evaluation task as data: one JSON file per task, in a directory a
 * facility can extend with its own. A task is the operator's request (one or
 * more turns), the starting machine state (see conditions.ts), the checks of
 * what the agent did (see graders.ts), and optional scripted transcripts of a
 * model that solves it and of models that get it wrong (used by the replay
 * mode and the tests; ignored when a real model is evaluated).
 *
 * @module
 */
import { z } from "zod";
import { errorMessage } from "../util/errors.ts";
import { isRefusal, readRegularText } from "../util/bounded_read.ts";

const Device = z.string().min(1).max(256);

const MinutesAgo = z.number().min(0).max(7 * 24 * 60);
const Minutes = z.number().positive().max(7 * 24 * 60);

/**
 * A fault of the facility, from `minutes_ago` before the attempt starts: a
 * cause the simulator's physics follows (a tripped station loses the beam,
 * a burst shortens the lifetime), so every reading, the archive and the
 * alarm log agree with it.
 */
const FaultSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("rf-trip"),
    station: z.number().int().min(1).max(4),
    cause: z.enum(["REFL_PWR", "ARC", "WATER", "KLYSTRON", "VACUUM"]),
    minutes_ago: MinutesAgo,
    /** Reset this long after the trip (absent: still tripped), then conditioned for `conditioning_min`. */
    reset_after_min: Minutes.optional(),
    conditioning_min: Minutes.optional(),
  }),
  z.strictObject({
    kind: z.literal("vacuum-burst"),
    gauge: Device,
    peak_mbar: z.number().positive(),
    tau_min: Minutes,
    minutes_ago: MinutesAgo,
  }),
  z.strictObject({
    kind: z.literal("bpm-drift"),
    device: Device,
    mm_per_min: z.number(),
    minutes_ago: MinutesAgo,
  }),
  z.strictObject({
    kind: z.literal("supply-fault"),
    device: Device,
    minutes_ago: MinutesAgo,
    duration_min: Minutes.optional(),
  }),
  z.strictObject({
    kind: z.literal("overtemp"),
    device: Device,
    rise_degc: z.number(),
    ramp_min: Minutes,
    minutes_ago: MinutesAgo,
    duration_min: Minutes.optional(),
  }),
  z.strictObject({
    kind: z.literal("injection"),
    cause: z.enum(["kicker", "gun", "timing", "septum"]),
    device: Device.optional(),
    level: z.number().optional(),
    minutes_ago: MinutesAgo,
    duration_min: Minutes.optional(),
  }),
  z.strictObject({
    kind: z.literal("id-stall"),
    device: Device,
    minutes_ago: MinutesAgo,
    duration_min: Minutes,
  }),
]);
export type Fault = z.infer<typeof FaultSchema>;

/** Starting conditions, applied to a fresh simulator before the first turn. */
export const ConditionsSchema = z.strictObject({
  /** The facility's own incidents leave these hours before the attempt (and its next hour) alone. */
  quiet_hours: z.number().min(0).max(7 * 24).optional(),
  /** Faults of the facility: causes its physics follows (see above). */
  faults: z.array(FaultSchema).optional(),
  /** Setpoints written before the attempt, after the faults (not audited: they are the starting state). */
  writes: z.record(Device, z.union([z.number(), z.string()])).optional(),
  /**
   * Log entries added to the e-log or alarm log, `minutes_ago` before the attempt starts: what
   * people wrote about the faults, or text a hostile service sends. An alarm entry must describe
   * an alarm the device is in at that time (the consistency test checks it).
   */
  logs: z.array(z.strictObject({
    source: z.enum(["elog", "alarm"]),
    minutes_ago: MinutesAgo,
    title: z.string(),
    text: z.string(),
    author: z.string().optional(),
    devices: z.array(Device).default([]),
    severity: z.enum(["NONE", "MINOR", "MAJOR", "INVALID"]).default("NONE"),
    status: z.string().optional(),
  })).optional(),
  /** Device descriptions replaced (e.g. one carrying an injected instruction). */
  descriptions: z.record(Device, z.string()).optional(),
  /** Units the archiver's metadata gives a device's series, replaced (archive metadata text). */
  archive_units: z.record(Device, z.string()).optional(),
});
export type Conditions = z.infer<typeof ConditionsSchema>;

/** Where a number in the final answer must come from. */
const Truth = z.union([
  z.strictObject({ device: Device }),
  z.strictObject({ value: z.number() }),
  z.strictObject({ on_crest_phase: z.literal(true) }),
  z.strictObject({
    stat: z.enum(["mean", "rms", "min", "max", "range"]),
    of: z.array(Device).min(1),
  }),
]);

const Tolerance = z.strictObject({
  abs: z.number().min(0).optional(),
  rel: z.number().min(0).optional(),
});

/** One check of what the agent did; the task passes when all pass. */
export const CheckSchema = z.discriminatedUnion("check", [
  z.strictObject({
    check: z.literal("called"),
    tool: z.string(),
    /** Each string must appear in the JSON of one call's arguments (case-insensitive). */
    args_include: z.array(z.string()).optional(),
    min: z.number().int().min(1).optional(),
  }),
  z.strictObject({ check: z.literal("not_called"), tool: z.string() }),
  z.strictObject({
    check: z.literal("read"),
    /** Each device must have been read by get_parameter (or a read action of a plan). */
    devices: z.array(Device).min(1),
  }),
  z.strictObject({
    check: z.literal("plan"),
    writes: z.array(z.strictObject({
      device: Device,
      value: z.number(),
      tolerance: z.number().min(0).default(1e-6),
    })).optional(),
    scan: z.strictObject({
      device: Device,
      start: z.number().optional(),
      stop: z.number().optional(),
      min_steps: z.number().int().min(2).optional(),
      reads: z.array(Device).optional(),
    }).optional(),
    /** The plan reads these devices after its writes (write-then-observe). */
    observes: z.array(Device).optional(),
    /** The plan has a rollback that writes every written device back. */
    rollback: z.boolean().optional(),
    /** The plan passed preflight (no limit violated). */
    within_limits: z.boolean().optional(),
  }),
  z.strictObject({ check: z.literal("no_plan") }),
  z.strictObject({
    check: z.literal("written"),
    /** Devices the audit shows written; `[]` means nothing at all was written. */
    devices: z.array(Device),
    /** Only these devices, nothing else (default true). */
    exactly: z.boolean().default(true),
  }),
  z.strictObject({
    check: z.literal("answer_number"),
    truth: Truth,
    tolerance: Tolerance,
  }),
  z.strictObject({
    check: z.literal("answer_matches"),
    /** Regular expression (case-insensitive) the final answer must match. */
    pattern: z.string(),
    /** Why it must: said when it does not. */
    because: z.string(),
  }),
  z.strictObject({
    check: z.literal("answer_not_matches"),
    pattern: z.string(),
    because: z.string(),
  }),
  z.strictObject({
    check: z.literal("budget"),
    max_tokens: z.number().int().min(1).optional(),
    max_tool_calls: z.number().int().min(0).optional(),
    max_model_calls: z.number().int().min(1).optional(),
  }),
]);
export type Check = z.infer<typeof CheckSchema>;

const Scenario = z.looseObject({ turns: z.array(z.unknown()) });

/**
 * A fact about the facility that a task's premise or expected answer rests
 * on, checked at several seeds by the tasks' consistency test (attempts
 * ignore it): a reading at the attempt's start (or `minutes_ago` before it,
 * from the archive), an alarm-log entry, or an archived change.
 */
export const ExpectSchema = z.union([
  z.strictObject({
    device: Device,
    minutes_ago: MinutesAgo.optional(),
    value: z.union([z.number(), z.string()]).optional(),
    min: z.number().optional(),
    max: z.number().optional(),
    severity: z.enum(["NONE", "MINOR", "MAJOR", "INVALID"]).optional(),
    status: z.string().optional(),
  }),
  z.strictObject({
    /** Two readings that differ by at least this much (a readback that does not follow). */
    differ: z.tuple([Device, Device]),
    by: z.number().min(0),
  }),
  z.strictObject({
    /** The alarm log holds an entry of this device with this status since `within_min`. */
    alarm: Device,
    status: z.string(),
    within_min: Minutes,
  }),
  z.strictObject({
    /** The archive shows this device changing by at least `min_change` (or at most `max_change`). */
    archive: Device,
    minutes: Minutes,
    min_change: z.number().min(0).optional(),
    max_change: z.number().min(0).optional(),
  }),
]);
export type Expect = z.infer<typeof ExpectSchema>;

export const TaskSchema = z.strictObject({
  $comment: z.string().optional(),
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and dashes"),
  category: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and dashes"),
  title: z.string(),
  /** Simulator seed: same seed, same facility. */
  seed: z.number().int().default(1),
  conditions: ConditionsSchema.default({}),
  /** The operator's messages, one per turn. */
  turns: z.array(z.string().min(1)).min(1),
  /** Hard limits of one attempt; past any of them the attempt fails with that reason. */
  limits: z.strictObject({
    seconds: z.number().min(1).max(3600).default(300),
    tokens: z.number().int().min(1).optional(),
    model_calls: z.number().int().min(1).optional(),
  }).default({ seconds: 300 }),
  grade: z.array(CheckSchema).min(1),
  /** Facts the premise and expected answer rest on (see {@link ExpectSchema}). */
  expect: z.array(ExpectSchema).optional(),
  /** Scripted transcripts (scenario JSON of the scripted server): one solving, some wrong. */
  scripted: z.strictObject({
    solving: Scenario,
    wrong: z.array(Scenario).min(1),
  }).optional(),
});
export type Task = z.infer<typeof TaskSchema>;

/** The shipped tasks; `--tasks-dir` adds a facility's own. */
export const DEFAULT_TASKS_URL = new URL("../../configs/evals/tasks", import.meta.url);

/** Validates parsed JSON as a task; throws a TypeError naming the source and the first problem. */
export function parseTask(json: unknown, source: string): Task {
  const r = TaskSchema.safeParse(json);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue ? issue.path.map(String).join(".") : "";
  throw new TypeError(`${source}: ${path || "$"}: ${issue?.message ?? "invalid task"}`);
}

/**
 * Reads every `*.json` under the directories (recursively), sorted by id.
 * Throws on an invalid file or a duplicated id, naming both files.
 */
/** The largest task file read (a task is a question, a set-up and its graders). */
const MAX_TASK_BYTES = 1 << 20;

export async function loadTasks(dirs: string[]): Promise<Task[]> {
  const byId = new Map<string, { task: Task; path: string }>();
  for (const dir of dirs) {
    for (const path of await jsonFiles(dir)) {
      let json: unknown;
      try {
        json = JSON.parse(
          await readRegularText(path, MAX_TASK_BYTES, { fix: "fix the task file" }),
        );
      } catch (e) {
        if (isRefusal(e)) throw new TypeError(e.message);
        throw new TypeError(`${path}: not JSON (${errorMessage(e)}); fix the task file`);
      }
      const task = parseTask(json, path);
      const seen = byId.get(task.id);
      if (seen) {
        throw new TypeError(`${path}: task id "${task.id}" is also used by ${seen.path}`);
      }
      byId.set(task.id, { task, path });
    }
  }
  return [...byId.values()].map((x) => x.task).sort((a, b) => a.id.localeCompare(b.id));
}

async function jsonFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) out.push(...await jsonFiles(p));
      // A link is followed, and a FIFO or a device is refused by name, not passed over.
      else if (e.name.endsWith(".json")) out.push(p);
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new TypeError(`${dir}: task directory not found; pass an existing one to --tasks-dir`);
    }
    throw e;
  }
  return out.sort();
}

/**
 * The tasks a selector names: a category, a task id, or a `*` glob over ids
 * (comma-separated alternatives). Throws when a selector matches nothing.
 */
export function selectTasks(tasks: Task[], selector: string | undefined): Task[] {
  if (!selector) return tasks;
  const parts = selector.split(",").map((s) => s.trim()).filter(Boolean);
  const chosen = new Set<Task>();
  for (const part of parts) {
    const re = new RegExp(
      `^${part.replace(/[.+^${}()|[\]\\?]/g, "\\$&").replace(/\*/g, ".*")}$`,
    );
    const hit = tasks.filter((t) => t.category === part || re.test(t.id));
    if (hit.length === 0) {
      throw new TypeError(`--tasks "${part}" matches no task id or category`);
    }
    for (const t of hit) chosen.add(t);
  }
  return tasks.filter((t) => chosen.has(t));
}
