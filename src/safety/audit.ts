/**
 * The audit trail: append-only JSONL, one file per UTC day, each line
 * fsynced. Every entry carries the hash of the entry before it (across
 * files), and its own hash over everything else, so editing, removing or
 * reordering any line breaks the chain at that line.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "../util/hash.ts";

/** What a caller records; the log adds time, chain and hash. */
export interface AuditRecord {
  operator: string;
  host: string;
  configHash: string;
  planHash: string;
  plan: unknown;
  decision: string;
  /** Who or what decided: "terminal", "--approved-hash", "policy: read-only"… */
  decidedBy: string;
  status?: string;
  results?: unknown;
  restores?: unknown;
  errors?: string[];
  violations?: unknown;
}

export interface AuditEntry extends AuditRecord {
  time: string;
  prevHash: string;
  hash: string;
}

export const GENESIS = "0".repeat(64);

/** Appends in flight per audit directory, in this process. */
const queues = new Map<string, Promise<void>>();

export class AuditLog {
  constructor(readonly dir: string, readonly now: () => number = Date.now) {}

  /**
   * Appends an entry, chained to the newest one in the directory, and syncs
   * it to disk. A lock file keeps two processes (a REPL and a `plan run`)
   * from forking the chain.
   */
  async append(record: AuditRecord): Promise<AuditEntry> {
    // File locks are per process; appends within one process queue up here.
    const previous = queues.get(this.dir) ?? Promise.resolve();
    const mine = previous.then(() => this.#append(record));
    queues.set(this.dir, mine.then(() => {}, () => {}));
    return await mine;
  }

  async #append(record: AuditRecord): Promise<AuditEntry> {
    await Deno.mkdir(this.dir, { recursive: true });
    const lock = await Deno.open(`${this.dir}/.lock`, { create: true, write: true, mode: 0o600 });
    try {
      await lock.lock(true);
      const time = new Date(this.now()).toISOString();
      const files = await this.files();
      const prevHash = (await this.#lastEntry(files))?.hash ?? GENESIS;
      // Files are chained in name order: a clock set back must not write into an older day.
      const newest = files.at(-1)?.slice(-16, -6);
      const day = newest && newest > time.slice(0, 10) ? newest : time.slice(0, 10);
      const body = { ...record, time, prevHash };
      const entry: AuditEntry = { ...body, hash: await entryHash(body) };
      const file = await Deno.open(`${this.dir}/${day}.jsonl`, {
        append: true,
        create: true,
        mode: 0o600,
      });
      try {
        const bytes = new TextEncoder().encode(`${JSON.stringify(entry)}\n`);
        let off = 0;
        while (off < bytes.length) off += await file.write(bytes.subarray(off));
        await file.sync();
      } finally {
        file.close();
      }
      return entry;
    } finally {
      lock.close(); // closing releases the lock
    }
  }

  /** The day files, oldest first. */
  async files(): Promise<string[]> {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(this.dir)) {
        if (e.isFile && /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(e.name)) names.push(e.name);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return names.sort().map((n) => `${this.dir}/${n}`);
  }

  async #lastEntry(files: string[]): Promise<AuditEntry | undefined> {
    for (const f of [...files].reverse()) {
      const lines = (await Deno.readTextFile(f)).split("\n").filter((l) => l.trim());
      const last = lines.at(-1);
      if (last === undefined) continue;
      try {
        return JSON.parse(last) as AuditEntry;
      } catch {
        // A torn or edited last line: chaining past it would hide it.
        throw new AuditError(
          `${f}: its last line is damaged; nothing can be recorded until it is looked at (accel-agent audit verify)`,
        );
      }
    }
    return undefined;
  }
}

/** The audit trail cannot be written; nothing that changes the machine may run. */
export class AuditError extends Error {
  override name = "AuditError";
}

/** The hash of an entry: SHA-256 of its canonical JSON without `hash`. */
export function entryHash(body: Omit<AuditEntry, "hash">): Promise<string> {
  return sha256Hex(canonicalJson(body));
}

export type VerifyResult =
  | { ok: true; entries: number; files: number; lastHash: string }
  | { ok: false; file: string; line: number; reason: string };

/**
 * Verifies a chain. With `fromGenesis` (the whole directory), the first entry
 * must be the first ever written, so removing the oldest files is caught too;
 * otherwise (one file) its first entry may link to anything.
 */
export async function verifyAudit(files: string[], fromGenesis = false): Promise<VerifyResult> {
  let prev: string | undefined = fromGenesis ? GENESIS : undefined;
  let entries = 0;
  for (const file of files) {
    const lines = (await Deno.readTextFile(file)).split("\n");
    if (lines.at(-1) === "") lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const bad = (reason: string) => ({ ok: false as const, file, line: i + 1, reason });
      let entry: AuditEntry;
      try {
        entry = JSON.parse(lines[i] as string);
      } catch {
        return bad("not valid JSON");
      }
      if (typeof entry !== "object" || entry === null || typeof entry.hash !== "string") {
        return bad("not an audit entry");
      }
      const { hash, ...body } = entry;
      if ((await entryHash(body)) !== hash) {
        return bad("the entry's content does not match its hash");
      }
      // The hash covers the content; the bytes must also be exactly as written.
      if (JSON.stringify(entry) !== lines[i]) return bad("the line is not as it was written");
      if (prev !== undefined && entry.prevHash !== prev) {
        return bad(
          "the entry does not link to the one before it (a line was removed, added or reordered)",
        );
      }
      prev = hash;
      entries++;
    }
  }
  return { ok: true, entries, files: files.length, lastHash: prev ?? GENESIS };
}
