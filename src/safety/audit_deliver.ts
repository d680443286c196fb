/**
 * Delivering forwarded audit records to a collector, within a deadline.
 *
 * Syslog over TCP has no acknowledgement, so a batch counts as delivered
 * only when the collector has read all of it: the records are written, the
 * sending side is shut (`closeWrite`, a FIN after the last byte), and the
 * collector's closing of its side (EOF on our read) is awaited — a collector
 * closes on EOF only after reading everything before it. A collector that
 * resets, never reads, or is slower than the deadline leaves the batch
 * undelivered, to be sent again (marked) later. An HTTP collector
 * acknowledges with a 2xx status.
 *
 * @module
 */
import type { Timers } from "../util/misc.ts";
import { errorMessage } from "../util/errors.ts";
import { type ForwardRecord, httpLine, octetFrame, syslogMessage } from "./syslog.ts";

/** Where records go. */
export type ForwardTarget =
  | { kind: "syslog"; host: string; port: number }
  | { kind: "http"; url: string };

/** How records are written for a target. */
export interface DeliverySettings {
  facility: number;
  appName: string;
  maxMessageBytes: number;
  /** The whole delivery of one batch: connect, write, confirmation. */
  timeoutMs: number;
}

/** A delivery that did not complete; its message says what happened, in a few words. */
export class DeliveryError extends Error {
  override name = "DeliveryError";
}

/** The target as messages name it. */
export function targetText(t: ForwardTarget): string {
  return t.kind === "syslog" ? `syslog ${t.host}:${t.port}` : `http ${t.url}`;
}

/** `op`, or the deadline's DeliveryError if that comes first. */
async function within<T>(
  op: Promise<T>,
  deadline: Promise<never>,
): Promise<T> {
  op.catch(() => {}); // a late failure after the deadline is nobody's to handle
  return await Promise.race([op, deadline]);
}

/** A promise rejected when `ms` have passed, and the function that disarms it. */
function deadlineOf(ms: number, timers: Timers, what: string) {
  let id: ReturnType<Timers["setTimeout"]> | undefined;
  const promise = new Promise<never>((_, reject) => {
    id = timers.setTimeout(() => reject(new DeliveryError(`no ${what} within ${ms} ms`)), ms);
  });
  promise.catch(() => {});
  return { promise, disarm: () => timers.clearTimeout(id as ReturnType<Timers["setTimeout"]>) };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/**
 * Sends a batch to a syslog collector over TCP and waits until it has read
 * it all: its end of the stream after ours. An end that comes before ours
 * (the collector closed without waiting for the records) is no confirmation.
 */
async function deliverSyslog(
  t: Extract<ForwardTarget, { kind: "syslog" }>,
  records: ForwardRecord[],
  s: DeliverySettings,
  timers: Timers,
): Promise<void> {
  const deadline = deadlineOf(s.timeoutMs, timers, "confirmation from the collector");
  const connecting = Deno.connect({ hostname: t.host, port: t.port });
  let conn: Deno.Conn | undefined;
  try {
    const c = conn = await within(connecting, deadline.promise);
    let ours = false;
    let early = false;
    // Read from the start: whatever the collector says is ignored; its end of the stream counts.
    const theirs = (async () => {
      const buf = new Uint8Array(4096);
      while ((await c.read(buf)) !== null) { /* discard */ }
      if (!ours) early = true;
    })();
    theirs.catch(() => {});
    const frames = records.map((r) =>
      octetFrame(syslogMessage(r, { ...s, maxBytes: s.maxMessageBytes }))
    );
    for (const f of frames) await within(writeAll(c, f), deadline.promise);
    // A collector that closed while we wrote is seen before our end is sent.
    await new Promise((r) => setTimeout(r, 0));
    if (early) throw new DeliveryError("the collector closed the connection before reading");
    ours = true;
    await within(c.closeWrite(), deadline.promise);
    await within(theirs, deadline.promise);
    if (early) throw new DeliveryError("the collector closed the connection before reading");
  } catch (e) {
    // A connection that comes after the deadline is closed as soon as it does.
    if (!conn) connecting.then(closeQuietly, () => {});
    if (e instanceof DeliveryError) throw e;
    throw new DeliveryError(errorMessage(e).split("\n")[0] ?? "failed");
  } finally {
    deadline.disarm();
    if (conn) closeQuietly(conn);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed already */ }
}

/** POSTs a batch as NDJSON; a 2xx status is the collector's acknowledgement. */
async function deliverHttp(
  t: Extract<ForwardTarget, { kind: "http" }>,
  records: ForwardRecord[],
  s: DeliverySettings,
  timers: Timers,
): Promise<void> {
  const abort = new AbortController();
  const id = timers.setTimeout(() => abort.abort(), s.timeoutMs);
  try {
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: records.map(httpLine).join(""),
      // A redirect is not followed: the records go to the collector named, or count as not sent.
      redirect: "manual",
      signal: abort.signal,
    });
    await res.body?.cancel();
    if (!res.ok) throw new DeliveryError(`answered HTTP ${res.status}`);
  } catch (e) {
    if (e instanceof DeliveryError) throw e;
    if (abort.signal.aborted) throw new DeliveryError(`no answer within ${s.timeoutMs} ms`);
    throw new DeliveryError(errorMessage(e).split("\n")[0] ?? "failed");
  } finally {
    timers.clearTimeout(id);
  }
}

/** Delivers a batch to a target, or throws a {@link DeliveryError}. */
export function deliver(
  t: ForwardTarget,
  records: ForwardRecord[],
  s: DeliverySettings,
  timers: Timers,
): Promise<void> {
  return t.kind === "syslog"
    ? deliverSyslog(t, records, s, timers)
    : deliverHttp(t, records, s, timers);
}
