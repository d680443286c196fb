/**
 * The audit trail: append-only JSONL, one file per UTC day, each line
 * fsynced. Every entry carries the hash of the entry before it (across
 * files), and its own hash over everything else, so editing, removing or
 * reordering any line breaks the chain at that line. With an audit key
 * (`<state>/keys/audit.key`) each entry also carries a MAC of its hash, so a
 * chain rewritten and re-hashed by someone without the key fails too. A head
 * record (entry count, last hash, MAC) is kept apart from the day files (by
 * default `<dir>/HEAD`; the program keeps it beside the audit directory, so
 * removing that directory is seen too) and replaced after each append under
 * the same lock, so removing the newest entries is detected as well.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "../util/hash.ts";
import { macOf } from "./keys.ts";
import {
  type AppendFs,
  appendWhole,
  cutTornTail,
  realAppendFs,
  tornTail,
} from "../util/whole_append.ts";
import { errorMessage } from "../util/errors.ts";
import { readJson } from "../util/json_file.ts";
import { readRegularText, refuseIrregular } from "../util/bounded_read.ts";
import { z } from "zod";

/** The limits and kill switches a decision was made under. */
export interface SafetyState {
  /** The limits file as read, and the SHA-256 of its bytes ("" when there is none). */
  limitsFile: string;
  limitsHash: string;
  /** Writes allowed after every switch. */
  writesEnabled: boolean;
  /** `[safety] writes_enabled` of the user's config. */
  configWritesEnabled: boolean;
  /** Why the config file could not be read again for its switch (writes are then off). */
  configError?: string;
  /** Every site file consulted: its path and what it says (false when unreadable). */
  site: { file: string; writesEnabled: boolean; error?: string }[];
}

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
  /** The limits and kill switches in force. */
  safety?: SafetyState;
  /** The approval token used or issued (its id, never the token). */
  token?: unknown;
  /** The run a record belongs to (started, write_ahead and the outcome share it). */
  run?: string;
  /** write_ahead: every device the plan may write, with its value before the plan. */
  originals?: unknown;
  /** The unfinished run a recovery plan's records belong to (its originals are that run's). */
  recovers?: string;
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
  /** HMAC of `hash` with the audit key; absent in entries written without one. */
  mac?: string;
}

/** The head record: how many entries the chain holds and the newest one's hash. */
export interface AuditHead {
  entries: number;
  lastHash: string;
  mac?: string;
}

export const GENESIS = "0".repeat(64);

/** What an append reads of the newest entry: the links of the chain. */
type ChainLink = Pick<AuditEntry, "hash" | "prevHash" | "mac">;

const ChainLinkSchema = z.looseObject({
  hash: z.string(),
  prevHash: z.string(),
  mac: z.string().optional(),
}) satisfies z.ZodType<ChainLink>;

const HeadSchema = z.looseObject({
  entries: z.int().min(0),
  lastHash: z.string(),
  mac: z.string().optional(),
}) satisfies z.ZodType<AuditHead>;

/** Appends in flight per audit directory, in this process. */
const queues = new Map<string, Promise<void>>();

export interface AuditLogOptions {
  /** The audit key; without it entries and head carry no MAC. */
  key?: () => Promise<CryptoKey>;
  /** Where the head record is kept (default `<dir>/HEAD`). */
  headPath?: string;
  /** The file operations appends use (tests inject a full disk). */
  fs?: AppendFs;
  /** Told, in one line, when a torn last line was cut off. */
  onRecovered?: (message: string) => void;
}

export class AuditLog {
  constructor(
    readonly dir: string,
    readonly now: () => number = Date.now,
    readonly opts: AuditLogOptions = {},
  ) {}

  /** The head record's file. */
  get headPath(): string {
    return this.opts.headPath ?? `${this.dir}/HEAD`;
  }

  /**
   * Appends an entry, chained to the newest one in the directory, and syncs
   * it to disk. A lock file keeps two processes (a REPL and a `plan run`)
   * from forking the chain. Throws {@link AuditError} when nothing could be
   * recorded.
   */
  async append(record: AuditRecord): Promise<AuditEntry> {
    // File locks are per process; appends within one process queue up here.
    const previous = queues.get(this.dir) ?? Promise.resolve();
    const mine = previous.then(() => this.#locked(() => this.#append(record)));
    queues.set(this.dir, mine.then(() => {}, () => {}));
    return await mine;
  }

  /**
   * Checks that an entry could be appended now (directory, lock, key, an
   * intact tail agreeing with the head), without appending one: run before
   * anything is decided, so a broken audit stops a plan before it is approved.
   */
  async ready(): Promise<void> {
    const previous = queues.get(this.dir) ?? Promise.resolve();
    const mine = previous.then(() => this.#locked(() => this.#tail()));
    queues.set(this.dir, mine.then(() => {}, () => {}));
    await mine;
  }

  async #locked<T>(body: () => Promise<T>): Promise<T> {
    try {
      await Deno.mkdir(this.dir, { recursive: true });
      // A FIFO in its place would block the open for good.
      await refuseIrregular(`${this.dir}/.lock`);
      const lock = await Deno.open(`${this.dir}/.lock`, { create: true, write: true, mode: 0o600 });
      try {
        await lock.lock(true);
        return await body();
      } finally {
        lock.close(); // closing releases the lock
      }
    } catch (e) {
      if (e instanceof AuditError) throw e;
      throw new AuditError(`cannot write the audit log in ${this.dir} (${errorMessage(e)})`);
    }
  }

  async #append(record: AuditRecord): Promise<AuditEntry> {
    const { files, last, entries } = await this.#tail();
    const key = await this.opts.key?.();
    const time = new Date(this.now()).toISOString();
    // Files are chained in name order: a clock set back must not write into an older day.
    const newest = files.at(-1)?.slice(-16, -6);
    const day = newest && newest > time.slice(0, 10) ? newest : time.slice(0, 10);
    const body = { ...record, time, prevHash: last?.hash ?? GENESIS };
    const hash = await entryHash(body);
    const entry: AuditEntry = { ...body, hash, ...(key ? { mac: await entryMac(key, hash) } : {}) };
    // The whole line and the head, or neither: a failure cuts the line back off.
    await appendWhole(
      this.opts.fs ?? realAppendFs,
      `${this.dir}/${day}.jsonl`,
      new TextEncoder().encode(`${JSON.stringify(entry)}\n`),
      () => this.#writeHead({ entries: entries + 1, lastHash: hash }, key),
    );
    return entry;
  }

  /**
   * The newest entry and the number of entries, checked against the head: a
   * tail that does not end where the head says is a cut or an edit, and
   * nothing more is recorded until someone looks (`audit verify`).
   */
  async #tail(): Promise<{ files: string[]; last?: ChainLink; entries: number }> {
    const files = await this.files();
    const { last, torn } = await this.#lastEntry(files);
    const head = await readHead(this.headPath);
    const tail = this.#checkHead(last, head);
    if (torn) {
      // The entries before the torn line end where the head says: an interrupted append.
      const report = await cutTornTail(torn);
      if (report) this.opts.onRecovered?.(report);
    }
    return { files, last, entries: tail ?? (last ? await countEntries(files) : 0) };
  }

  /** The entry count the head gives for this tail (undefined: no head); throws when they disagree. */
  #checkHead(last: ChainLink | undefined, head: AuditHead | undefined): number | undefined {
    if (head === undefined) {
      // A keyed log always has a head: without it, its newest entries may have been cut.
      if (last?.mac !== undefined) {
        throw new AuditError(
          `${this.headPath}: the head record is missing; nothing can be recorded until ` +
            `it is looked at (accel-agent audit verify)`,
        );
      }
      // A log written before heads existed (or a new one): counted once.
      return undefined;
    }
    if ((last?.hash ?? GENESIS) === head.lastHash) return head.entries;
    // The process that wrote the last entry stopped before replacing the head.
    if (last && last.prevHash === head.lastHash) return head.entries + 1;
    throw new AuditError(
      `${this.dir}: the newest entry is not the one ${this.headPath} records ` +
        `(entries were removed or replaced); nothing can be recorded until it is looked at ` +
        `(accel-agent audit verify)`,
    );
  }

  async #writeHead(head: AuditHead, key: CryptoKey | undefined): Promise<void> {
    const full = key ? { ...head, mac: await headMac(key, head) } : head;
    const tmp = `${this.headPath}.${Deno.pid}.tmp`;
    try {
      await Deno.writeTextFile(tmp, `${JSON.stringify(full)}\n`, { mode: 0o600 });
      using f = await Deno.open(tmp, { read: true });
      await f.sync();
      await Deno.rename(tmp, this.headPath);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw new Error(`the head record could not be replaced (${errorMessage(e)})`);
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

  /**
   * The newest complete entry, and the newest file when it ends in a torn
   * line (bytes after its last newline: an append that did not finish).
   */
  async #lastEntry(files: string[]): Promise<{ last?: ChainLink; torn?: string }> {
    let torn: string | undefined;
    for (const [i, f] of [...files].reverse().entries()) {
      const bytes = await Deno.readFile(f);
      const cut = tornTail(bytes);
      if (i === 0 && cut.torn.length) torn = f;
      const text = new TextDecoder().decode(bytes.subarray(0, cut.keep));
      const last = text.split("\n").filter((l) => l.trim()).at(-1);
      if (last === undefined) continue;
      const read = readJson(ChainLinkSchema, last);
      if (read.ok) return { last: read.value, torn };
      // A complete line that is not an entry was edited: chaining past it would hide it.
      throw new AuditError(
        `${f}: its last line is damaged (${read.why}); nothing can be recorded until it is looked at (accel-agent audit verify)`,
      );
    }
    return { torn };
  }
}

/** The audit trail cannot be written; nothing that changes the machine may run. */
export class AuditError extends Error {
  override name = "AuditError";
}

/** A head record is one short line; a file larger than this is not one. */
const MAX_HEAD_BYTES = 64 * 1024;

/** The head record in `path`, or undefined when there is none. */
export async function readHead(path: string): Promise<AuditHead | undefined> {
  let text: string;
  try {
    // A small regular file: a FIFO or /dev/zero in its place is refused, never waited on.
    text = await readRegularText(path, MAX_HEAD_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  const head = readJson(HeadSchema, text);
  if (head.ok) return head.value;
  throw new AuditError(
    `${path}: the head record is damaged (${head.why}); look at it with accel-agent audit verify`,
  );
}

async function countEntries(files: string[]): Promise<number> {
  let n = 0;
  for (const f of files) {
    n += (await Deno.readTextFile(f)).split("\n").filter((l) => l.trim()).length;
  }
  return n;
}

/** The hash of an entry: SHA-256 of its canonical JSON without `hash` and `mac`. */
export function entryHash(body: Omit<AuditEntry, "hash" | "mac">): Promise<string> {
  return sha256Hex(canonicalJson(body));
}

/** An entry's MAC: HMAC-SHA256 of its hash (which covers the previous hash) with the audit key. */
export function entryMac(key: CryptoKey, hash: string): Promise<string> {
  return macOf(key, `accel-agent audit entry v1\n${hash}`);
}

/** The head's MAC, over its count and last hash. */
export function headMac(key: CryptoKey, head: AuditHead): Promise<string> {
  return macOf(key, `accel-agent audit head v1\n${head.entries}\n${head.lastHash}`);
}
