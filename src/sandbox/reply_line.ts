/**
 * Protocol lines from the sandbox process to the agent, each written whole.
 * Two threads of the process write them to stdout: the main thread (ready,
 * the result) and the memory watch (its reports, every 100 ms). A long line
 * takes several writes to a pipe, and another thread's write could land
 * between them; so each line is written under a lock the two share, in a
 * SharedArrayBuffer that is never handed to the interpreter's worker.
 *
 * @module
 */
import type { SandboxReply } from "./protocol.ts";

/** A new lock for {@link replyWriter}: one Int32 in shared memory, 0 when free. */
export function newLineLock(): SharedArrayBuffer {
  return new SharedArrayBuffer(4);
}

/** Writes `nonce`-prefixed JSON lines to stdout under `lock`. */
export function replyWriter(nonce: string, lock: SharedArrayBuffer): (m: SandboxReply) => void {
  const held = new Int32Array(lock);
  const encoder = new TextEncoder();
  return (m) => {
    const bytes = encoder.encode(`${nonce} ${JSON.stringify(m)}\n`);
    while (Atomics.compareExchange(held, 0, 0, 1) !== 0) Atomics.wait(held, 0, 1, 20);
    try {
      // A pipe may take less than a whole line at once.
      let at = 0;
      while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
    } finally {
      Atomics.store(held, 0, 0);
      Atomics.notify(held, 0);
    }
  };
}
