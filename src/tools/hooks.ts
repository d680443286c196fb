/**
 * Runs facility hook programs (see `src/agent/hooks.ts`): no shell, the
 * JSON object on stdin, stderr kept (the first 64 KiB), stdout ignored.
 *
 * A hook is bounded whatever it does. It runs in a process group of its
 * own; when it passes its timeout or the turn is cancelled the group gets
 * SIGTERM, and SIGKILL {@link HOOK_KILL_GRACE_MS} later if anything of it is
 * still there. The run is answered at the latest at the timeout plus the
 * grace, even for a program that ignores SIGTERM or a process that cannot
 * die at once. A hook that exits is answered by its exit status, even when
 * a process it left behind holds its stderr open. A program that leaves
 * (a one-shot command whose turn a signal stopped) SIGKILLs the groups of
 * the hooks still running first ({@link killRunningHooks}).
 *
 * @module
 */
import type { HookRun, HookRunner, HookSpec } from "../agent/hooks.ts";
import { resolveConfigPath } from "../config/paths.ts";
import { type Timers, unrefTimers } from "../util/misc.ts";
import { errorMessage } from "../util/errors.ts";

/**
 * The hook with its program resolved as the grants name it: a path (with a
 * slash) relative to the config file's directory, `~` the home directory; a
 * bare name is left to `PATH`.
 */
export function resolveHook(spec: HookSpec, baseDir: string, home: string): HookSpec {
  const [program, ...args] = spec.command;
  if (program === undefined || !program.includes("/")) return spec;
  return { ...spec, command: [resolveConfigPath(program, baseDir, home), ...args] };
}

/** Bytes of a hook's stderr kept (the veto reason is its first line). */
const STDERR_BYTES = 64 * 1024;

/** From SIGTERM to SIGKILL of a hook that outlived its time. */
export const HOOK_KILL_GRACE_MS = 2_000;

/** How long stderr is read after the hook exited (a process it left may hold it open). */
const DRAIN_MS = 100;

/**
 * The program that signals a process group when the runtime may not
 * (`Deno.kill` needs unscoped `--allow-run`; the grants name this one).
 */
export const KILL_PROGRAM = "/bin/kill";

/**
 * A runner that spawns hook programs with `Deno.Command` (it needs
 * `--allow-run` for each); its timeouts and grace run on `timers` (tests
 * pass a manual clock's).
 */
export function processHookRunner(
  timers: Timers = unrefTimers,
  graceMs = HOOK_KILL_GRACE_MS,
): HookRunner {
  return (command, stdin, timeoutMs, signal) =>
    runHook(command, stdin, { timeoutMs, graceMs, timers }, signal);
}

interface Limits {
  timeoutMs: number;
  graceMs: number;
  timers: Timers;
}

async function runHook(
  command: string[],
  stdin: string,
  limits: Limits,
  signal: AbortSignal,
): Promise<HookRun> {
  const [program, ...args] = command;
  if (!program) return { status: "failed", message: "the hook's command is empty" };
  if (signal.aborted) return { status: "failed", message: "the turn was cancelled" };
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      // Its own session and process group: the whole group is signalled, and a Ctrl-C at
      // the terminal reaches it only through the turn's cancellation.
      detached: true,
    }).spawn();
  } catch (e) {
    return { status: "failed", message: errorMessage(e) };
  }
  feed(child, stdin);
  const stderr = capped(child.stderr);
  const stop = new Stopper(child, limits);
  const onCancel = () => stop.begin("cancelled");
  signal.addEventListener("abort", onCancel, { once: true });
  // Whether it exited on its own, before it was told to stop.
  let ownExit = false;
  const exited = child.status.then((s) => {
    ownExit = stop.why === undefined;
    return s;
  });
  try {
    const ended = await Promise.race([exited, stop.given]);
    if (ended === "given_up" || !ownExit) return stop.outcome();
    const drained = await Promise.race([stderr.text.then(() => true), stop.after(DRAIN_MS, false)]);
    if (!drained) stderr.cancel();
    return { status: "exited", code: ended.code, stderr: await stderr.text };
  } finally {
    signal.removeEventListener("abort", onCancel);
    stop.dispose();
    stderr.cancel();
  }
}

/** Hooks started whose run has not been answered: the ones {@link killRunningHooks} stops. */
const running = new Set<Stopper>();

/**
 * SIGKILLs the process group of every hook still running, when the program
 * is about to exit: a turn stopped by a signal ends without waiting for its
 * hooks' grace, and a hook that ignores SIGTERM must not outlive the
 * program with nobody left to stop it.
 */
export function killRunningHooks(): void {
  for (const stop of running) stop.kill();
}

/**
 * Ends a hook that outlives its time: SIGTERM to its group at the deadline
 * (or on cancellation), SIGKILL after the grace, and `given` resolves then,
 * whether or not the program has gone.
 */
class Stopper {
  why: "timeout" | "cancelled" | undefined;
  readonly given: Promise<"given_up">;
  #giveUp!: () => void;
  readonly #timers: ReturnType<typeof setTimeout>[] = [];
  readonly #waits: (() => void)[] = [];

  constructor(readonly child: Deno.ChildProcess, readonly limits: Limits) {
    this.given = new Promise((resolve) => this.#giveUp = () => resolve("given_up"));
    this.#arm(limits.timeoutMs, () => this.begin("timeout"));
    running.add(this);
  }

  /** SIGKILL to the group now (the program is leaving). */
  kill(): void {
    signalGroup(this.child, "SIGKILL");
  }

  begin(why: "timeout" | "cancelled"): void {
    if (this.why) return;
    this.why = why;
    signalGroup(this.child, "SIGTERM");
    this.#arm(this.limits.graceMs, () => {
      signalGroup(this.child, "SIGKILL");
      this.#giveUp();
    });
  }

  outcome(): HookRun {
    return this.why === "cancelled"
      ? { status: "failed", message: "the turn was cancelled" }
      : { status: "timeout" };
  }

  /** Resolves to `value` after `ms` on the runner's timers. */
  after<T>(ms: number, value: T): Promise<T> {
    return new Promise((resolve) => {
      const done = () => resolve(value);
      this.#waits.push(done);
      this.#arm(ms, done);
    });
  }

  dispose(): void {
    running.delete(this);
    for (const id of this.#timers) this.limits.timers.clearTimeout(id);
    for (const done of this.#waits) done();
  }

  #arm(ms: number, fn: () => void): void {
    this.#timers.push(this.limits.timers.setTimeout(fn, ms));
  }
}

/**
 * Sends `sig` to the hook's process group (it leads one): through the
 * runtime when it may, else through {@link KILL_PROGRAM}; to the hook alone
 * when neither can.
 */
function signalGroup(child: Deno.ChildProcess, sig: "SIGTERM" | "SIGKILL"): void {
  try {
    Deno.kill(-child.pid, sig);
    return;
  } catch (e) {
    // ESRCH: the group is gone already.
    if (e instanceof Deno.errors.NotFound) return;
  }
  try {
    const kill = new Deno.Command(KILL_PROGRAM, {
      args: ["-s", sig.slice(3), "--", `-${child.pid}`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    kill.status.catch(() => {});
  } catch {
    // Not granted or not there: the hook itself at least.
  }
  try {
    child.kill(sig);
  } catch {
    // It has exited.
  }
}

/** Writes the hook's input; a hook that exits without reading it is still heard by its status. */
function feed(child: Deno.ChildProcess, stdin: string): void {
  const writer = child.stdin.getWriter();
  writer.write(new TextEncoder().encode(stdin))
    .then(() => writer.close())
    .catch(() => {});
}

/** The stream's first {@link STDERR_BYTES} as text once it ends; `cancel` stops reading. */
function capped(stream: ReadableStream<Uint8Array>): { text: Promise<string>; cancel(): void } {
  const reader = stream.getReader();
  const text = (async () => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (size < STDERR_BYTES) chunks.push(value.subarray(0, STDERR_BYTES - size));
        size += value.length;
      }
    } catch {
      // Cancelled, or the pipe broke: what was read stands.
    }
    const all = new Uint8Array(Math.min(size, STDERR_BYTES));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    return new TextDecoder().decode(all);
  })();
  return { text, cancel: () => void reader.cancel().catch(() => {}) };
}
