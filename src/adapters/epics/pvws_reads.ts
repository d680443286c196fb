/**
 * The per-PV bookkeeping of the pvws client and a read's wait for first
 * updates: each PV in use has a reference count, its merged state and its
 * watchers, and one given back lingers, still subscribed, until it is
 * cleared; a read resolves with every PV's state or the error that says why
 * it has none (the deadline, a dropped socket, garbage from the gateway, an
 * abort).
 *
 * @module
 */
import type { Timers } from "../../util/misc.ts";
import type { PvState } from "./pvws_messages.ts";
import { asError } from "./pvws_socket.ts";

/** Hears a PV's updates, and an Error when its value is lost or unknown. */
export type Watcher = (state: PvState | undefined, error?: Error) => void;

/** One PV in use. */
export interface Entry {
  refs: number;
  state?: PvState;
  watchers: Set<Watcher>;
  /** The gateway's last frame for this PV was garbage, and no good one came since. */
  malformed?: Error;
}

/** The PVs in use, and those given back but still subscribed on the server (lingering). */
export class PvTable {
  readonly entries = new Map<string, Entry>();
  readonly #lingering = new Set<string>();

  /** Takes a reference on each name; returns those that need a subscribe. */
  take(names: string[]): string[] {
    const fresh: string[] = [];
    for (const name of names) {
      let entry = this.entries.get(name);
      if (!entry) {
        entry = { refs: 0, watchers: new Set() };
        this.entries.set(name, entry);
      }
      // A lingering PV is still subscribed: its monitor is live, no new subscribe.
      if (entry.refs++ === 0 && !this.#lingering.delete(name)) fresh.push(name);
    }
    return fresh;
  }

  /**
   * Gives references back. A PV nobody uses any more lingers while
   * `subscribed` (its socket is open), else it is forgotten. Returns whether
   * any PV lingers.
   */
  give(names: string[], subscribed: boolean): boolean {
    for (const name of names) {
      const entry = this.entries.get(name);
      if (entry && --entry.refs <= 0) {
        entry.refs = 0;
        // Its socket dropped while it was in use: no subscription is left to keep.
        if (subscribed) this.#lingering.add(name);
        else this.entries.delete(name);
      }
    }
    return this.#lingering.size > 0;
  }

  /** Forgets every lingering PV; returns their names, to clear on the server. */
  dropLingering(): string[] {
    const done = [...this.#lingering];
    this.#lingering.clear();
    for (const name of done) this.entries.delete(name);
    return done;
  }
}

/** What {@link firstUpdates} waits on. */
export interface FirstUpdatesRequest {
  names: string[];
  /** The client's entries, by PV name. */
  pvs: ReadonlyMap<string, Entry>;
  watch(name: string, fn: Watcher): () => void;
  timers: Timers;
  timeoutMs: number;
  /** The timeout an error names. */
  statedMs: number;
  /** A malformed frame for no PV in particular, when the deadline passes. */
  malformedNote(): string | undefined;
  signal?: AbortSignal;
}

/** Each PV's state as soon as it has one, or the Error that says why not. */
export function firstUpdates(req: FirstUpdatesRequest): Promise<Map<string, PvState | Error>> {
  const { timers, signal } = req;
  return new Promise((resolve) => {
    const out = new Map<string, PvState | Error>();
    const pending = new Set<string>();
    const unwatch: (() => void)[] = [];
    for (const name of req.names) {
      const entry = req.pvs.get(name);
      // After a garbage delta the held state is stale: the PV's value is unknown.
      if (entry?.malformed) out.set(name, entry.malformed);
      else if (entry?.state) out.set(name, entry.state);
      else pending.add(name);
    }
    const finish = () => {
      timers.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      for (const u of unwatch) u();
      resolve(out);
    };
    const onAbort = () => {
      for (const name of pending) out.set(name, asError(signal?.reason));
      pending.clear();
      finish();
    };
    const timer = timers.setTimeout(() => {
      // A gateway that sent garbage may have meant it for these PVs: that is what to report.
      const malformed = req.malformedNote();
      const why = malformed
        ? `${malformed} and no update for this PV`
        : "the PV did not connect through the gateway";
      for (const name of pending) {
        out.set(name, new Error(`no value within ${req.statedMs} ms: ${why}`));
      }
      pending.clear();
      finish();
    }, req.timeoutMs);
    for (const name of pending) {
      unwatch.push(req.watch(name, (state, error) => {
        if (!pending.delete(name)) return;
        out.set(name, error ?? state ?? new Error("no value"));
        if (pending.size === 0) finish();
      }));
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort(); // aborted while the socket was opening
    else if (pending.size === 0) finish();
  });
}
