/**
 * A copy of the audit off the console: each entry, as it is appended, also
 * goes to the facility's log collectors named in the site file
 * (`[audit_forward]`: syslog over TCP, and/or an HTTP endpoint). Forwarding
 * never holds up what is being audited: it runs beside it, and a collector
 * that is down is said once (and again when it is back) while the records
 * wait.
 *
 * What was delivered is kept in a cursor per collector
 * (`<state>/audit.forward/<collector>.json`: the entries delivered, the
 * hash of the last, and the highest entry ever attempted), written before
 * each attempt and after each confirmed delivery, so a process killed
 * mid-send, a collector that fails after reading, or a damaged cursor
 * loses nothing: every entry after the cursor is sent, and any entry that
 * may have reached the collector before is marked `resent`. A lock file
 * keeps two processes of one state directory from sending the same batch.
 *
 * @module
 */
import type { AuditEntry } from "./audit.ts";
import { type Timers, unrefTimers } from "../util/misc.ts";
import { errorMessage } from "../util/errors.ts";
import {
  deliver,
  DeliveryError,
  type DeliverySettings,
  type ForwardTarget,
  targetText,
} from "./audit_deliver.ts";
import type { ForwardRecord } from "./syslog.ts";
import { type Cursor, CursorFile, readRecordsAfter } from "./forward_cursor.ts";

export type { ForwardTarget } from "./audit_deliver.ts";

/** A collector and how to deliver to it, as a site file configures it. */
export interface ForwardConfig {
  target: ForwardTarget;
  delivery: DeliverySettings;
  /** The first wait before trying a failed collector again (doubling, up to 5 minutes). */
  retryMs: number;
}

/** Records delivered in one batch at most. */
const BATCH = 200;
const MAX_RETRY_MS = 300_000;

export interface ForwarderOptions {
  stateDir: string;
  auditDir: string;
  collectors: ForwardConfig[];
  /** One line for the operator: a collector down, back, or a cursor replaced. */
  report: (line: string) => void;
  timers?: Timers;
}

/** Forwards the audit of one state directory to every configured collector. */
export class AuditForwarder {
  readonly #channels: Channel[];

  constructor(readonly opts: ForwarderOptions) {
    this.#channels = opts.collectors.map((c) => new Channel(c, opts));
  }

  /** An entry was appended (its place in the chain is `seq`): send it, and whatever waits before it. */
  appended(seq: number): void {
    for (const c of this.#channels) c.want(seq);
  }

  /** Sends, in the background, what earlier runs left unsent. */
  catchUp(): void {
    for (const c of this.#channels) c.want(0);
  }

  /** Waits, at most each collector's timeout, for the entries this process appended to go out. */
  async close(): Promise<void> {
    await Promise.all(this.#channels.map((c) => c.settle()));
  }

  /** Each collector's state, for `audit verify` and tests. */
  status(): { target: string; failing: boolean; appendedUnsent: boolean; busy: boolean }[] {
    return this.#channels.map((c) => c.status());
  }
}

/** One collector: at most one delivery at a time, retried with backoff while it fails. */
class Channel {
  readonly #cursor: CursorFile;
  readonly #timers: Timers;
  #running: Promise<void> | undefined;
  #again = false;
  #failing: string | undefined;
  #retry: ReturnType<Timers["setTimeout"]> | undefined;
  #backoff: number;
  /** The newest entry this process appended, and the newest known delivered. */
  #mine = 0;
  #delivered = 0;

  constructor(readonly config: ForwardConfig, readonly opts: ForwarderOptions) {
    this.#cursor = new CursorFile(opts.stateDir, config.target);
    this.#timers = opts.timers ?? unrefTimers;
    this.#backoff = config.retryMs;
  }

  want(seq: number): void {
    this.#mine = Math.max(this.#mine, seq);
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.want(0);
      }
    });
  }

  /**
   * Waits until the entries this process appended are delivered, trying once
   * more if nothing is under way, for at most the delivery timeout.
   */
  async settle(): Promise<void> {
    const t = this.#timers;
    const end = t.now() + this.config.delivery.timeoutMs;
    let tried = false;
    while (this.#delivered < this.#mine) {
      if (!this.#running) {
        if (tried) break;
        tried = true;
        this.want(0);
      }
      const left = end - t.now();
      if (left <= 0) break;
      let id: ReturnType<Timers["setTimeout"]> | undefined;
      await Promise.race([
        this.#running ?? Promise.resolve(),
        new Promise<void>((r) => id = t.setTimeout(r, left)),
      ]);
      if (id !== undefined) t.clearTimeout(id);
    }
    if (this.#retry !== undefined) t.clearTimeout(this.#retry);
  }

  status() {
    return {
      target: targetText(this.config.target),
      failing: this.#failing !== undefined,
      appendedUnsent: this.#delivered < this.#mine,
      busy: this.#running !== undefined,
    };
  }

  async #run(): Promise<void> {
    if (this.#retry !== undefined) this.#timers.clearTimeout(this.#retry);
    this.#retry = undefined;
    try {
      await this.#cursor.locked(async () => {
        while (await this.#sendBatch()) { /* until nothing waits */ }
      });
      if (this.#failing !== undefined) {
        this.opts.report(
          `audit forwarding to ${
            targetText(this.config.target)
          } works again; the waiting records were sent`,
        );
      }
      this.#failing = undefined;
      this.#backoff = this.config.retryMs;
    } catch (e) {
      const why = e instanceof DeliveryError ? e.message : errorMessage(e).split("\n")[0];
      if (this.#failing === undefined) {
        this.opts.report(
          `audit forwarding to ${targetText(this.config.target)} failed (${why}); ` +
            "nothing is held up, and the records wait until it answers",
        );
      }
      this.#failing = why;
      this.#retry = this.#timers.setTimeout(() => this.want(0), this.#backoff);
      this.#backoff = Math.min(MAX_RETRY_MS, this.#backoff * 2);
    }
  }

  /** Sends the next batch after the cursor; false when nothing waits. */
  async #sendBatch(): Promise<boolean> {
    const read = await this.#cursor.read();
    let cursor: Cursor = read.cursor;
    const after = await readRecordsAfter(this.opts.auditDir, cursor, BATCH + 1);
    if (read.damaged || after.chainChanged) {
      // What was delivered is unknown: everything again, each marked as possibly sent before.
      this.opts.report(
        `audit forwarding to ${targetText(this.config.target)}: ${
          read.damaged ?? "the audit chain no longer holds the cursor's entry"
        }; sending all ${after.total} records again, marked as possible duplicates`,
      );
      cursor = { sent: 0, hash: "", attempted: Math.max(cursor.attempted, after.total) };
      await this.#cursor.save(cursor);
      return true;
    }
    const batch = after.entries.slice(0, BATCH);
    const last = batch.at(-1);
    if (!last) {
      // Written even with nothing to send: a cursor missing later was removed.
      if (read.missing) await this.#cursor.save(cursor);
      this.#delivered = Math.max(this.#delivered, cursor.sent);
      return false;
    }
    const attempted = Math.max(cursor.attempted, last.seq);
    // Before the first byte: a process killed now sends these again, marked.
    await this.#cursor.save({ ...cursor, attempted });
    const records: ForwardRecord[] = batch.map((b) => ({
      ...b,
      resent: b.seq <= cursor.attempted,
    }));
    await deliver(this.config.target, records, this.config.delivery, this.#timers);
    await this.#cursor.save({ sent: last.seq, hash: last.entry.hash, attempted });
    this.#delivered = last.seq;
    return after.entries.length > batch.length;
  }
}

/** An entry with its place in the chain. */
export interface Numbered {
  seq: number;
  entry: AuditEntry;
}
