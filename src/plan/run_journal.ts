/**
 * Plans in flight, as files the operating system keeps honest. Before a
 * plan's first write, a marker with every original value it may change is
 * written and synced under `<state>/running/`, and held with an exclusive
 * lock while the plan runs. When the plan's outcome is in the audit log,
 * the marker goes. A process that dies in between — SIGKILL, a crash, a
 * power cut — leaves the marker and loses the lock (the kernel releases it
 * with the process), so the next start finds exactly the plans that did not
 * finish, and what to put back; a plan still running in another process
 * holds its lock and is left alone.
 *
 * A marker only points at its run: the originals a recovery restores come
 * from the audit's write-ahead record of that run (`write_ahead.ts`), and a
 * marker that says otherwise is not trusted. A recovery plan is bound to its
 * run here, by its hash, in `<run>.recovery` beside the marker (a file the
 * model and the sandbox cannot write); while it runs, its process holds the
 * first run's marker locked instead of writing a marker of its own, so a
 * recovery that is itself killed leaves the first run's marker, pointing at
 * the first run's originals.
 *
 * @module
 */
import { z } from "zod";
import type { Value } from "../adapters/adapter.ts";
import { readJson } from "../util/json_file.ts";
import { kindOf, notRegular, readRegularText } from "../util/bounded_read.ts";

/** What is known of a plan that started writing. */
export interface RunMarker {
  /** The run's id, also in its audit records. */
  run: string;
  planHash: string;
  description: string;
  operator: string;
  host: string;
  pid: number;
  startedAt: string;
  /** Each device the plan may write, with its value just before the plan (null: unreadable). */
  originals: Record<string, Value | null>;
  /**
   * Set when the plan ended but its outcome could not be written to the
   * audit log, or not every device it wrote was restored: the run stays open.
   */
  outcome?: {
    status: string;
    errors: string[];
    restores: unknown;
    /** False when the audit does not hold the outcome (absent in markers that predate it). */
    recorded?: boolean;
  };
  /** Set on a marker that could not be read (what it says is then a placeholder). */
  damaged?: string;
}

/** A run id as the program makes them (`crypto.randomUUID()`). */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `s` is a run id. */
export function isRunId(s: string): boolean {
  return RUN_ID.test(s);
}

/** Whether `s` can name a run: a run id, or its first 8 or more characters. */
export function isRunIdPrefix(s: string): boolean {
  if (s.length < 8 || s.length > 36) return false;
  return RUN_ID.test(s + "00000000-0000-0000-0000-000000000000".slice(s.length));
}

const ValueSchema = z.union([z.number(), z.string(), z.boolean(), z.array(z.number())]);

/** A marker as read back; unknown fields are kept. */
const RunMarkerSchema = z.looseObject({
  run: z.string(),
  planHash: z.string(),
  description: z.string(),
  operator: z.string(),
  host: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  originals: z.record(z.string(), ValueSchema.nullable()),
  outcome: z.looseObject({
    status: z.string(),
    errors: z.array(z.string()),
    restores: z.unknown(),
    recorded: z.boolean().optional(),
  }).optional(),
  damaged: z.string().optional(),
}) satisfies z.ZodType<RunMarker>;

/** A marker written and locked; `end` or `keep` releases it. */
export interface OpenRun {
  readonly marker: RunMarker;
  /** The outcome is recorded: the marker goes. */
  end(): Promise<void>;
  /** The outcome could not be recorded: the marker stays, saying how the plan ended. */
  keep(outcome: NonNullable<RunMarker["outcome"]>): Promise<void>;
}

const encoder = new TextEncoder();

export class RunJournal {
  constructor(readonly dir: string) {}

  /** Writes and syncs the marker, then holds it locked until the run ends. */
  async begin(marker: RunMarker): Promise<OpenRun> {
    await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = this.#path(marker.run);
    const file = await Deno.open(path, { create: true, write: true, read: true, mode: 0o600 });
    try {
      // Locked before it holds anything, so no reader takes a half-written marker for a dead run.
      await file.lock(true);
      await writeWhole(file, marker);
      await syncDir(this.dir);
    } catch (e) {
      file.close();
      await Deno.remove(path).catch(() => {});
      throw e;
    }
    let open = true;
    const release = () => {
      if (!open) return;
      open = false;
      file.close(); // closing releases the lock
    };
    return {
      marker,
      end: async () => {
        try {
          await Deno.remove(path);
          await syncDir(this.dir);
        } finally {
          release();
        }
      },
      keep: async (outcome) => {
        try {
          await file.truncate(0);
          await file.seek(0, Deno.SeekMode.Start);
          await writeWhole(file, { ...marker, outcome });
        } finally {
          release();
        }
      },
    };
  }

  /**
   * Plans that started writing and whose process is gone without recording
   * an outcome, oldest first. A marker another live process holds is
   * skipped; one that cannot be parsed is reported with what its name tells.
   */
  async unfinished(): Promise<RunMarker[]> {
    const found: RunMarker[] = [];
    let names: string[];
    try {
      names = [];
      for await (const e of Deno.readDir(this.dir)) {
        if (e.isFile && e.name.endsWith(".json")) names.push(e.name);
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
    for (const name of names) {
      const run = name.slice(0, -5);
      const marker = isRunId(run)
        ? await this.#readIfOrphaned(`${this.dir}/${name}`, run)
        : placeholder(run, `${this.dir}/${name}: its name is not a run id; remove it by hand`);
      if (marker) found.push(marker);
    }
    return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /**
   * Forgets an unfinished run (restored, or dismissed by the operator), and
   * its recovery plans: the binding first, so a process stopped in between
   * leaves the run open and unbound, never a binding to a run that is gone.
   */
  async resolve(run: string): Promise<void> {
    for (const path of [this.#recoveryPath(run), this.#path(run)]) {
      try {
        await Deno.remove(path);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
    await syncDir(this.dir);
  }

  /** Records that the plan with hash `planHash` recovers `run` (synced before it returns). */
  async bindRecovery(run: string, planHash: string): Promise<void> {
    const path = this.#recoveryPath(run);
    const plans = new Set([...(await this.#recoveryPlans(path)), planHash]);
    const tmp = `${path}.${Deno.pid}.tmp`;
    try {
      await Deno.writeTextFile(tmp, `${JSON.stringify({ run, plans: [...plans] })}\n`, {
        mode: 0o600,
      });
      using f = await Deno.open(tmp, { read: true });
      await f.sync();
      await Deno.rename(tmp, path);
      await syncDir(this.dir);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw e;
    }
  }

  /**
   * The unfinished run a plan with this hash was made to recover, if any. A
   * directory or binding that cannot be read binds nothing: the plan then
   * runs as any other, and its own marker (which fails when the directory
   * cannot be written) guards it.
   */
  async recoveryFor(planHash: string): Promise<string | undefined> {
    try {
      const names: string[] = [];
      for await (const e of Deno.readDir(this.dir)) {
        if (e.isFile && e.name.endsWith(".recovery")) names.push(e.name.slice(0, -9));
      }
      for (const run of names.filter(isRunId)) {
        if ((await this.#recoveryPlans(this.#recoveryPath(run))).includes(planHash)) return run;
      }
    } catch {
      // unreadable: see above
    }
    return undefined;
  }

  /**
   * Holds the marker of unfinished `run` locked while a recovery of it runs
   * (in place of a marker of the recovery's own); `release` lets it go.
   * Throws when the marker is gone or another process holds it.
   */
  async adopt(run: string): Promise<{ marker: RunMarker; release(): void }> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path(run), { read: true, write: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new Error(`run ${run} is no longer unfinished (its marker is gone)`);
      }
      throw e;
    }
    let marker: RunMarker;
    try {
      // A FIFO put in its place opens (read and write never wait) but a read would wait for ever.
      const info = await file.stat();
      if (!info.isFile) throw notRegular(this.#path(run), kindOf(info));
      if (!(await file.tryLock(true))) {
        throw new Error(`run ${run} is being recovered or run by another process`);
      }
      marker = await readMarker(file, this.#path(run), run);
    } catch (e) {
      file.close();
      throw e;
    }
    let open = true;
    return {
      marker,
      release: () => {
        if (open) file.close();
        open = false;
      },
    };
  }

  async #recoveryPlans(path: string): Promise<string[]> {
    try {
      const read = readJson(RecoverySchema, await readRegularText(path, 64 * 1024));
      return read.ok ? read.value.plans : [];
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
  }

  #recoveryPath(run: string): string {
    return `${this.#path(run).slice(0, -5)}.recovery`;
  }

  async #readIfOrphaned(path: string, run: string): Promise<RunMarker | undefined> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true, write: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined; // ended meanwhile
      throw e;
    }
    try {
      // Replaced by a FIFO since it was listed: reading would wait for ever.
      if (!(await file.stat()).isFile) return undefined;
      if (!(await file.tryLock(true))) return undefined; // its process still runs it
      return await readMarker(file, path, run);
    } finally {
      file.close();
    }
  }

  #path(run: string): string {
    if (!isRunId(run)) throw new RangeError(`not a run id: ${run}`);
    return `${this.dir}/${run}.json`;
  }
}

/**
 * The marker in an open file; a placeholder saying why when it cannot be
 * read or names another run than its file does.
 */
async function readMarker(file: Deno.FsFile, path: string, run: string): Promise<RunMarker> {
  const text = new TextDecoder().decode(await readAll(file));
  const read = readJson(RunMarkerSchema, text);
  // A marker is its file: content naming another run (a copy, an edit) would hide this one.
  if (read.ok && read.value.run !== run) {
    return placeholder(
      run,
      `its marker ${path} names run ${JSON.stringify(read.value.run)}, not ${run}`,
    );
  }
  if (read.ok) return read.value;
  // The file stays as it is: what it holds may be all that is known of the plan.
  return placeholder(run, `its marker ${path} is damaged (${read.why})`);
}

const RecoverySchema = z.looseObject({ run: z.string(), plans: z.array(z.string()) });

/** What is known of a run whose marker cannot be read: its name, and why. */
function placeholder(run: string, damaged: string): RunMarker {
  return {
    run,
    planHash: "",
    description: "",
    operator: "",
    host: "",
    pid: 0,
    startedAt: "",
    originals: {},
    damaged,
  };
}

async function writeWhole(file: Deno.FsFile, marker: RunMarker): Promise<void> {
  const bytes = encoder.encode(`${JSON.stringify(marker)}\n`);
  let off = 0;
  while (off < bytes.length) off += await file.write(bytes.subarray(off));
  await file.sync();
}

async function readAll(file: Deno.FsFile): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buf = new Uint8Array(16 * 1024);
  for (;;) {
    const n = await file.read(buf);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
    total += n;
    if (total > 4 * 1024 * 1024) break; // a marker is small; anything larger is damaged
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Syncs a directory, so a file created or removed in it survives a power cut. */
async function syncDir(dir: string): Promise<void> {
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch {
    // Some file systems refuse to sync a directory; the file itself is synced.
  }
}
