/**
 * A logbook kept in a file: the simulator's own logbook (which its `logs`
 * then shows beside the generated history), and the local logbook of a
 * facility without Olog. One JSON line per entry, appended whole and synced
 * under a lock, so two processes posting at once each get their own entry
 * and the draft id is checked inside the lock (exactly once). Attachments
 * are copied beside the file. Directory 0700, files 0600.
 *
 * @module
 */
import { z } from "zod";
import type { LogEntry, Severity } from "./adapter.ts";
import type { Logbook, LogbookEntry, PostedEntry } from "./logbook.ts";
import { appendWhole, cutTornTail, realAppendFs } from "../util/whole_append.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { errorMessage } from "../util/errors.ts";
import { openLockFile } from "../util/lock_file.ts";

/** The largest logbook file read (64 MiB): past it, reads and posts fail, naming the file. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

const StoredSchema = z.looseObject({
  id: z.string(),
  draft: z.string(),
  time: z.string(),
  title: z.string(),
  text: z.string(),
  author: z.string(),
  logbooks: z.array(z.string()),
  level: z.string(),
  tags: z.array(z.string()),
  devices: z.array(z.string()),
  attachments: z.array(z.looseObject({ name: z.string(), bytes: z.number() })),
});
type Stored = z.infer<typeof StoredSchema>;

/** Olog's default levels as severities (as the Olog reader maps them). */
const LEVEL_SEVERITY: Record<string, Severity> = {
  problem: "MINOR",
  warning: "MINOR",
  urgent: "MAJOR",
  bad: "MAJOR",
};

export class FileLogbook implements Logbook {
  /**
   * `kind` "simulator" or "file"; ids are `<idPrefix><n>`. `now` stamps the
   * entries (the simulator's clock, so they fall inside its history).
   */
  constructor(
    readonly path: string,
    readonly kind: "simulator" | "file",
    readonly now: () => number = Date.now,
  ) {}

  get where(): string {
    return this.kind === "simulator"
      ? `the simulator's logbook (${this.path})`
      : `the local logbook ${this.path}`;
  }

  get #prefix(): string {
    return this.kind === "simulator" ? "sim-" : "local-";
  }

  async find(draftId: string): Promise<string | undefined> {
    return (await this.#read()).find((e) => e.draft === draftId)?.id;
  }

  async post(entry: LogbookEntry): Promise<PostedEntry> {
    return await this.#locked(async () => {
      const entries = await this.#read();
      const already = entries.find((e) => e.draft === entry.draftId);
      if (already) return { id: already.id };
      const id = `${this.#prefix}${entries.length + 1}`;
      const attachments = await this.#keep(id, entry);
      const stored: Stored = {
        id,
        draft: entry.draftId,
        time: new Date(this.now()).toISOString(),
        title: entry.title,
        text: entry.body,
        author: entry.author,
        logbooks: entry.logbooks,
        level: entry.level,
        tags: entry.tags,
        devices: entry.devices,
        attachments,
      };
      await appendWhole(
        realAppendFs,
        this.path,
        new TextEncoder().encode(`${JSON.stringify(stored)}\n`),
      );
      return { id };
    });
  }

  /** Every entry, as the e-log shows them (oldest first); damaged lines are left out. */
  async entries(): Promise<LogEntry[]> {
    return (await this.#read()).map((e) => ({
      source: "elog" as const,
      id: e.id,
      time: e.time,
      title: e.title,
      text: e.text,
      author: e.author,
      ...(e.logbooks[0] ? { logbook: e.logbooks[0] } : {}),
      devices: [...e.devices],
      severity: LEVEL_SEVERITY[e.level.toLowerCase()] ?? "NONE",
      status: e.level,
    }));
  }

  async #read(): Promise<Stored[]> {
    let text: string;
    try {
      text = await readRegularText(this.path, MAX_FILE_BYTES);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw new Error(`cannot read ${this.where}: ${errorMessage(e)}`);
    }
    const out: Stored[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const parsed = StoredSchema.safeParse(JSON.parse(line));
        if (parsed.success) out.push(parsed.data);
      } catch {
        // A damaged line is not an entry; the others still are.
      }
    }
    return out;
  }

  /** Copies the attachments beside the logbook; returns what the entry records of them. */
  async #keep(id: string, entry: LogbookEntry): Promise<Stored["attachments"]> {
    if (!entry.attachments.length) return [];
    const dir = `${dirOf(this.path)}/attachments/${id}`;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const out: Stored["attachments"] = [];
    for (const a of entry.attachments) {
      const name = a.name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "_") || "file";
      await Deno.writeFile(`${dir}/${name}`, a.bytes, { mode: 0o600 });
      out.push({ name, bytes: a.bytes.byteLength, path: `${dir}/${name}` });
    }
    return out;
  }

  async #locked<T>(body: () => Promise<T>): Promise<T> {
    try {
      await Deno.mkdir(dirOf(this.path), { recursive: true, mode: 0o700 });
      const lock = await openLockFile(`${this.path}.lock`);
      try {
        await lock.lock(true);
        // An append that did not finish left a torn line: cut it off (kept aside) first.
        await cutTornTail(this.path).catch((e) => {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        });
        return await body();
      } finally {
        lock.close();
      }
    } catch (e) {
      throw new Error(`cannot write ${this.where}: ${errorMessage(e)}`);
    }
  }
}

function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i) : ".";
}
