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
 * Before each append the newest entry's hash and MAC and the head's MAC are
 * checked: a tail forged without the key, or another state directory's, is
 * refused with the line `audit verify` gives (`audit_chain.ts` holds the
 * checks both make).
 *
 * @module
 */
import { sameText } from "./keys.ts";
import {
  type AppendFs,
  appendWhole,
  cutTornTail,
  realAppendFs,
  tornTail,
} from "../util/whole_append.ts";
import { errorMessage } from "../util/errors.ts";
import { readJson } from "../util/json_file.ts";
import { makePrivateDir } from "../util/private_files.ts";
import { openLockFile } from "../util/lock_file.ts";
import { z } from "zod";
import {
  type AuditEntry,
  AuditError,
  type AuditHead,
  type AuditRecord,
  chainBreakText,
  checkEntryLine,
  entryHash,
  entryMac,
  GENESIS,
  HEAD_MAC_MISMATCH,
  headMac,
  macProblem,
  readAuditBytes,
  readAuditFile,
  readHead,
} from "./audit_chain.ts";
import { verifyAuditDir } from "./audit_verify.ts";

export {
  type AuditEntry,
  AuditError,
  type AuditHead,
  type AuditRecord,
  chainBreakText,
  entryHash,
  entryMac,
  GENESIS,
  headMac,
  readHead,
  type SafetyState,
} from "./audit_chain.ts";

/** What an append reads of the newest entry: the links of the chain. */
type ChainLink = Pick<AuditEntry, "hash" | "prevHash" | "mac">;

const ChainLinkSchema = z.looseObject({
  hash: z.string(),
  prevHash: z.string(),
  mac: z.string().optional(),
}) satisfies z.ZodType<ChainLink>;

/** Said after a break an append found: nothing more is chained onto it. */
const UNTIL_LOOKED_AT = "nothing can be recorded until it is looked at (accel-agent audit verify)";

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
  /** Told of each entry once it is on disk, with its place in the chain (1 for the first). */
  onAppended?: (entry: AuditEntry, seq: number) => void;
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
    const mine = previous.then(() => this.#locked(async () => this.#tail(await this.opts.key?.())));
    queues.set(this.dir, mine.then(() => {}, () => {}));
    await mine;
  }

  async #locked<T>(body: () => Promise<T>): Promise<T> {
    try {
      await makePrivateDir(this.dir);
      const lock = await openLockFile(`${this.dir}/.lock`);
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
    const key = await this.opts.key?.();
    const { files, last, entries } = await this.#tail(key);
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
    this.opts.onAppended?.(entry, entries + 1);
    return entry;
  }

  /**
   * The newest entry and the number of entries, checked against the head: a
   * tail that does not end where the head says is a cut or an edit, and
   * nothing more is recorded until someone looks (`audit verify`). With the
   * key, the newest entry's MAC and the head's are checked too, so a tail
   * forged without the key, or copied from another state directory, is
   * refused with the line `audit verify` gives.
   */
  async #tail(
    key: CryptoKey | undefined,
  ): Promise<{ files: string[]; last?: ChainLink; entries: number }> {
    const files = await this.files();
    let checked;
    try {
      checked = await this.#checkedTail(files, key);
    } catch (e) {
      if (!(e instanceof TailBroken)) throw e;
      // Said as `audit verify` says it: the first line it fails on, which may be before the tail.
      const verified = await verifyAuditDir(this.dir, files, key, this.headPath)
        .catch(() => undefined);
      const line = verified && !verified.ok ? chainBreakText(verified) : e.message;
      throw new AuditError(`${line}; ${UNTIL_LOOKED_AT}`);
    }
    const { last, torn, tail } = checked;
    if (torn) {
      // The entries before the torn line end where the head says: an interrupted append.
      const report = await cutTornTail(torn);
      if (report) this.opts.onRecovered?.(report);
    }
    return { files, last, entries: tail ?? (last ? await countEntries(files) : 0) };
  }

  /**
   * The newest entry (one the log wrote, with its MAC when there is a key),
   * the head (with a MAC that holds), and what the head says of the count;
   * throws {@link TailBroken} for a tail nothing may be chained onto.
   */
  async #checkedTail(files: string[], key: CryptoKey | undefined) {
    const { last, torn, at } = await this.#lastEntry(files);
    const head = await readHead(this.headPath);
    if (key && last && at) {
      const why = await macProblem(last, key, head?.mac !== undefined);
      if (why) throw new TailBroken(chainBreakText({ ...at, reason: why }));
    }
    if (key && head && (head.mac === undefined || !sameText(await headMac(key, head), head.mac))) {
      throw new TailBroken(
        chainBreakText({ file: this.headPath, line: 1, reason: HEAD_MAC_MISMATCH }),
      );
    }
    return { last, torn, tail: this.#checkHead(last, head) };
  }

  /** The entry count the head gives for this tail (undefined: no head); throws when they disagree. */
  #checkHead(last: ChainLink | undefined, head: AuditHead | undefined): number | undefined {
    if (head === undefined) {
      // A keyed log always has a head: without it, its newest entries may have been cut.
      if (last?.mac !== undefined) {
        throw new TailBroken(`${this.headPath}: the head record is missing`);
      }
      // A log written before heads existed (or a new one): counted once.
      return undefined;
    }
    if ((last?.hash ?? GENESIS) === head.lastHash) return head.entries;
    // The process that wrote the last entry stopped before replacing the head.
    if (last && last.prevHash === head.lastHash) return head.entries + 1;
    throw new TailBroken(
      `${this.dir}: the newest entry is not the one ${this.headPath} records ` +
        `(entries were removed or replaced)`,
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
  async #lastEntry(
    files: string[],
  ): Promise<{ last?: AuditEntry; torn?: string; at?: { file: string; line: number } }> {
    let torn: string | undefined;
    for (const [i, f] of [...files].reverse().entries()) {
      const bytes = await readAuditBytes(f);
      const cut = tornTail(bytes);
      if (i === 0 && cut.torn.length) torn = f;
      const lines = new TextDecoder().decode(bytes.subarray(0, cut.keep)).split("\n");
      let n = lines.length;
      while (n > 0 && !lines[n - 1]?.trim()) n--;
      if (n === 0) continue;
      const last = lines[n - 1] as string;
      const at = { file: f, line: n };
      const read = readJson(ChainLinkSchema, last);
      // A complete line that is not an entry was edited: chaining past it would hide it.
      if (!read.ok) throw new TailBroken(`${f}: its last line is damaged (${read.why})`);
      // The newest entry must be one the log wrote: its hash over its content, its bytes as written.
      const checked = await checkEntryLine(last);
      if (!checked.ok) throw new TailBroken(chainBreakText({ ...at, reason: checked.reason }));
      return { last: checked.entry, torn, at };
    }
    return { torn };
  }
}

/** A tail nothing may be chained onto; said to the caller in `audit verify`'s words. */
class TailBroken extends Error {}

async function countEntries(files: string[]): Promise<number> {
  let n = 0;
  for (const f of files) {
    n += (await readAuditFile(f)).split("\n").filter((l) => l.trim()).length;
  }
  return n;
}
