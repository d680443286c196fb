/**
 * The per-PV bookkeeping of the pvws client and a read's wait for first
 * updates: each PV in use has a reference count, its merged state and its
 * watchers; a read resolves with every PV's state or the error that says why
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
