/**
 * The sandbox process's watch: a worker of its own, a thread apart from the
 * process's main thread and from the interpreter's worker, and unreachable
 * from Python. While the code runs it reports the whole process's memory to
 * the agent every {@link HEARTBEAT_MS} (see `memory_reading.ts` for what a
 * reading is and when it is refused) and interrupts the code at its time
 * limit. Nothing the main thread is busy with (copying files out, a message
 * it must read) delays a report; the agent kills a process whose reports
 * stop, or that reports itself over its limit or unmeasurable.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import {
  HEARTBEAT_MS,
  WATCH_READY,
  WATCH_STOP,
  type WatchInit,
  type WatchRun,
} from "./protocol.ts";
import { measure, peakKib, ReservedDescriptor } from "./memory_reading.ts";
import { replyWriter } from "./reply_line.ts";

/** How often a still-running script is interrupted again after its limit. */
const REINTERRUPT_MS = 50;

let init: WatchInit | undefined;
let reserve: ReservedDescriptor | undefined;

self.onmessage = (e: MessageEvent<WatchInit | WatchRun>) => {
  const msg = e.data;
  if (msg.type === "init" && !init) {
    init = msg;
    reserve = new ReservedDescriptor(msg.reservePath);
    // Deno sets up a thread's timers on the first one made (5–15 ms): paid
    // now, while the process waits for its run, not when the run arrives.
    clearTimeout(setTimeout(() => {}, 0));
    self.postMessage(WATCH_READY);
  } else if (msg.type === "run" && init && reserve) {
    self.onmessage = null; // one run per process
    watch(init, reserve, msg.timeoutMs);
  }
};

function watch(init: WatchInit, reserve: ReservedDescriptor, timeoutMs: number): void {
  const send = replyWriter(init.nonce, init.lock);
  const interrupt = new Int32Array(init.interrupt);
  // SIGINT (2) at the limit, and again until the script gives up: code
  // that catches KeyboardInterrupt only delays the agent's hard kill.
  setTimeout(() => {
    Atomics.store(interrupt, 0, 2);
    setInterval(() => Atomics.store(interrupt, 0, 2), REINTERRUPT_MS);
  }, timeoutMs);
  let timer: ReturnType<typeof setInterval> | undefined;
  // The peak before the code began: the spawning process's size and the load.
  const startPeak = peakKib() ?? 0;
  const check = () => {
    const report = measure(reserve, init.limitMb, undefined, startPeak);
    send(report);
    if (report.over || report.error !== undefined) {
      // The agent kills the process on this report; the main thread ends it too.
      clearInterval(timer);
      self.postMessage(WATCH_STOP);
      return false;
    }
    return true;
  };
  if (check()) timer = setInterval(check, HEARTBEAT_MS);
}
