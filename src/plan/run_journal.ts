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
 * @module
 */
import { z } from "zod";
import type { Value } from "../adapters/adapter.ts";
import { readJson } from "../util/json_file.ts";

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
   * audit log: the machine's state is known, the record is not.
   */
  outcome?: { status: string; errors: string[]; restores: unknown };
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
  }).optional(),
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
      const marker = await this.#readIfOrphaned(`${this.dir}/${name}`, name.slice(0, -5));
      if (marker) found.push(marker);
    }
    return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /** The unfinished run with this id (or a unique prefix of it). */
  async find(run: string): Promise<RunMarker | undefined> {
    const all = await this.unfinished();
    const hits = all.filter((m) => m.run === run || m.run.startsWith(run));
    return hits.length === 1 ? hits[0] : all.find((m) => m.run === run);
  }

  /** Forgets an unfinished run (restored, or dismissed by the operator). */
  async resolve(run: string): Promise<void> {
    try {
      await Deno.remove(this.#path(run));
      await syncDir(this.dir);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
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
      const text = new TextDecoder().decode(await readAll(file));
      const read = readJson(RunMarkerSchema, text);
      if (read.ok) return read.value;
      // The file stays as it is: what it holds may be all that is known of the plan.
      return {
        run,
        planHash: "",
        description: `(its marker ${path} is damaged: ${read.why}; ` +
          "check the devices it may have changed by hand, then dismiss it)",
        operator: "",
        host: "",
        pid: 0,
        startedAt: "",
        originals: {},
      };
    } finally {
      file.close();
    }
  }

  #path(run: string): string {
    if (!/^[0-9a-f-]{8,64}$/.test(run)) throw new RangeError(`not a run id: ${run}`);
    return `${this.dir}/${run}.json`;
  }
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
