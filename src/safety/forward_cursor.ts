/**
 * The durable cursor of one audit collector and the entries after it.
 *
 * The cursor (`<state>/audit.forward/<kind>-<host>_<port>.json`, mode 0600)
 * holds `sent` (entries the collector confirmed, in chain order), `hash`
 * (the chain hash of entry `sent`, so a replaced or restarted audit chain
 * is noticed) and `attempted` (the highest entry ever handed to the
 * collector: those up to it that are sent again are marked). It is
 * replaced by rename after an fsync, so it is always one whole version.
 *
 * @module
 */
import type { AuditEntry } from "./audit.ts";
import type { ForwardTarget } from "./audit_deliver.ts";
import { errorMessage } from "../util/errors.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { withLockFile } from "../util/lock_file.ts";
import { readAuditFile } from "./audit_chain.ts";

export interface Cursor {
  sent: number;
  hash: string;
  attempted: number;
}

const FRESH: Cursor = { sent: 0, hash: "", attempted: 0 };

/** The largest cursor file read: three numbers and a hash. */
const MAX_CURSOR_BYTES = 4096;

/** A file name for a target: its kind and address, with anything but `[A-Za-z0-9.-]` as `_`. */
export function cursorName(t: ForwardTarget): string {
  const address = t.kind === "syslog" ? `${t.host}_${t.port}` : t.url;
  return `${t.kind}-${address.replace(/[^A-Za-z0-9.-]/g, "_").slice(0, 120)}`;
}

export class CursorFile {
  readonly path: string;
  /** Whether the lock file was there before this process took it: the cursor was written then. */
  #lockedBefore = false;

  constructor(readonly stateDir: string, target: ForwardTarget) {
    this.path = `${stateDir}/audit.forward/${cursorName(target)}.json`;
  }

  /** Runs `body` holding this collector's lock (one sender per collector across processes). */
  async locked<T>(body: () => Promise<T>): Promise<T> {
    await Deno.mkdir(`${this.stateDir}/audit.forward`, { recursive: true, mode: 0o700 });
    this.#lockedBefore = await Deno.lstat(`${this.path}.lock`).then(() => true, () => false);
    // A FIFO or a link at the lock's name is refused, not opened (an open would wait for ever).
    return await withLockFile(`${this.path}.lock`, body);
  }

  /**
   * The cursor; a missing file is a fresh start (`missing`), a damaged one is
   * said (and read as fresh). Missing beside a lock file an earlier run left,
   * it was removed: what was delivered is unknown, which is said as damage.
   */
  async read(): Promise<{ cursor: Cursor; damaged?: string; missing?: boolean }> {
    let text: string;
    try {
      // Through the bounded reader: a FIFO, a device or a huge file here is damage, not a wait.
      text = await readRegularText(this.path, MAX_CURSOR_BYTES);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        return this.#lockedBefore
          ? { cursor: FRESH, damaged: `its cursor ${this.path} is missing` }
          : { cursor: FRESH, missing: true };
      }
      return {
        cursor: FRESH,
        damaged: `its cursor ${this.path} cannot be read (${errorMessage(e)})`,
      };
    }
    try {
      const c = JSON.parse(text) as Partial<Cursor>;
      const n = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;
      if (n(c.sent) && n(c.attempted) && typeof c.hash === "string" && c.attempted! >= c.sent!) {
        return { cursor: { sent: c.sent!, hash: c.hash, attempted: c.attempted! } };
      }
    } catch { /* reported below */ }
    return { cursor: FRESH, damaged: `its cursor ${this.path} is damaged` };
  }

  async save(c: Cursor): Promise<void> {
    const tmp = `${this.path}.${Deno.pid}.tmp`;
    try {
      // Made new: whatever was left at the name (a FIFO, a link) is not written through.
      await Deno.remove(tmp).catch(() => {});
      await Deno.writeTextFile(tmp, `${JSON.stringify(c)}\n`, { mode: 0o600, createNew: true });
      using f = await Deno.open(tmp, { read: true });
      await f.sync();
      await Deno.rename(tmp, this.path);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw e;
    }
  }
}

/** The day files of an audit directory, oldest first. */
async function dayFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(e.name)) names.push(e.name);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return names.sort().map((n) => `${dir}/${n}`);
}

/** Complete lines counted in day files by size: a file that has not grown is not read again to count. */
const counted = new Map<string, { size: number; lines: number }>();

function completeLines(text: string): string[] {
  return text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter((l) => l.trim());
}

/**
 * The entries after `cursor.sent` (at most `limit`), numbered in chain
 * order, and how many the chain holds. Only complete lines count (an append
 * in progress is read next time). `chainChanged`: entry `cursor.sent` is not
 * the one the cursor names (the audit was replaced), or the chain is
 * shorter than it. Files wholly before the cursor are not read again.
 */
export async function readRecordsAfter(
  auditDir: string,
  cursor: Cursor,
  limit = Infinity,
): Promise<
  { entries: { seq: number; entry: AuditEntry }[]; total: number; chainChanged: boolean }
> {
  const entries: { seq: number; entry: AuditEntry }[] = [];
  let seq = 0;
  let chainChanged = false;
  for (const file of await dayFiles(auditDir)) {
    const size = (await Deno.stat(file)).size;
    const known = counted.get(file);
    if (known && known.size === size && seq + known.lines < cursor.sent) {
      seq += known.lines;
      continue;
    }
    const lines = completeLines(await readAuditFile(file));
    counted.set(file, { size, lines: lines.length });
    for (const line of lines) {
      seq++;
      if (seq < cursor.sent || entries.length >= limit) continue;
      let entry: AuditEntry;
      try {
        entry = JSON.parse(line) as AuditEntry;
      } catch {
        // A damaged line is still a record: sent as the text it is, with no hash.
        entry = { damaged: line } as unknown as AuditEntry;
      }
      if (seq === cursor.sent) {
        if (entry.hash !== cursor.hash) chainChanged = true;
        continue;
      }
      entries.push({ seq, entry });
    }
  }
  if (seq < cursor.sent) chainChanged = true;
  return { entries, total: seq, chainChanged };
}
