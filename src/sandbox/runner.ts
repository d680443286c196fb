/**
 * {@link SandboxRunner} over Pyodide in a separate OS process. One
 * interpreter serves runs one at a time; a process that was killed (time,
 * memory, crash) is replaced in the background so the next run is warm.
 *
 * @module
 */
import type { SandboxSetup } from "./protocol.ts";
import { collectOutputFiles } from "./output_files.ts";
import { SandboxProcess } from "./sandbox_process.ts";
import type { RunRequest, RunResult, SandboxLimits, SandboxRunner } from "./types.ts";

export interface PyodideSandboxOptions extends SandboxSetup {
  limits: SandboxLimits;
}

/** How often the process's memory is looked at during a run. */
const MEMORY_POLL_MS = 50;
/**
 * The runtime around the WebAssembly heap (V8, the worker, Pyodide's JS) is
 * about 200 MB; the process is killed when its resident size passes the heap
 * cap by more than this.
 */
const RSS_HEADROOM_MB = 384;

export class PyodideSandbox implements SandboxRunner {
  readonly limits: SandboxLimits;
  readonly #setup: SandboxSetup;
  #proc?: SandboxProcess;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;

  constructor(opts: PyodideSandboxOptions) {
    const { limits, ...setup } = opts;
    this.limits = limits;
    this.#setup = setup;
  }

  prewarm(delayMs = 0): void {
    if (delayMs <= 0) {
      try {
        if (!this.#closed) this.#process();
      } catch {
        // The first run reports why (e.g. the work directory cannot be made).
      }
      return;
    }
    // Later, so starting the process does not compete with drawing the prompt;
    // unref'd, so it never keeps the program alive.
    Deno.unrefTimer(setTimeout(() => this.prewarm(), delayMs));
  }

  /** Resolves when a prewarmed interpreter is ready (for tests and benchmarks). */
  async ready(): Promise<{ ms: number; fromSnapshot: boolean; pid: number }> {
    const proc = this.#process();
    return { ...(await proc.ready), pid: proc.pid };
  }

  run(req: RunRequest): Promise<RunResult> {
    const result = this.#queue.then(() => this.#run(req));
    this.#queue = result.catch(() => {});
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const proc = this.#proc;
    this.#proc = undefined;
    if (proc) {
      proc.kill("closed");
      await proc.exited;
    }
  }

  #process(): SandboxProcess {
    if (!this.#proc) {
      const { workRoot, snapshotPath } = this.#setup;
      Deno.mkdirSync(workRoot, { recursive: true });
      if (snapshotPath) Deno.mkdirSync(dirname(snapshotPath), { recursive: true });
      const proc = new SandboxProcess(this.#setup, this.limits.memoryMb);
      this.#proc = proc;
      proc.exited.then(() => {
        if (this.#proc === proc) this.#proc = undefined;
      });
    }
    return this.#proc;
  }

  async #run(req: RunRequest): Promise<RunResult> {
    const started = performance.now();
    if (this.#closed) throw new Error("the sandbox is closed");
    const limits = this.limits;
    const timeoutMs = req.timeoutMs ?? limits.timeoutMs;
    let workDir = "";
    let proc: SandboxProcess;
    const fail = (error: string, killed?: RunResult["killed"]): RunResult => ({
      ok: false,
      stdout: "",
      stderr: "",
      error,
      timedOut: killed === "timeout",
      ...(killed ? { killed } : {}),
      files: [],
      filesOmitted: 0,
      workDir,
      ms: performance.now() - started,
    });
    try {
      proc = this.#process();
      workDir = await Deno.makeTempDir({ dir: this.#setup.workRoot, prefix: "run-" });
      await proc.ready;
    } catch (e) {
      const message = (e as Error).message;
      return fail(
        message.startsWith("the sandbox") ? message : `the sandbox could not start: ${message}`,
      );
    }
    const id = this.#nextId++;
    let killed: RunResult["killed"];
    const kill = (why: NonNullable<RunResult["killed"]>) => {
      killed ??= why;
      proc.kill(why);
    };
    // The hard stop: the interrupt buffer fires at timeoutMs inside the process.
    const deadline = setTimeout(() => kill("timeout"), timeoutMs + limits.graceMs);
    const memory = setInterval(() => {
      if ((proc.rssMb() ?? 0) > limits.memoryMb + RSS_HEADROOM_MB) kill("memory");
    }, MEMORY_POLL_MS);
    const onAbort = () => kill("cancelled");
    req.signal?.addEventListener("abort", onAbort, { once: true });
    if (req.signal?.aborted) onAbort();
    try {
      const reply = await Promise.race([
        proc.run({
          type: "run",
          id,
          code: req.code,
          argv: req.argv ?? ["<code>"],
          workDir,
          timeoutMs,
          maxOutputChars: limits.maxOutputChars,
        }),
        proc.exited.then(() => undefined),
      ]);
      if (!reply) {
        this.prewarm(); // a fresh interpreter for the next run
        // Output is lost with the process; files written so far are not.
        const { files, omitted } = await collectOutputFiles(workDir, limits);
        return {
          ...fail(killedMessage(killed, timeoutMs, limits.memoryMb), killed ?? "crashed"),
          files,
          filesOmitted: omitted,
        };
      }
      if (reply.fatal) {
        // The interpreter is unusable (e.g. the WebAssembly stack overflowed).
        proc.kill("crashed");
        if (this.#proc === proc) this.#proc = undefined;
        this.prewarm();
      }
      const { files, omitted } = await collectOutputFiles(workDir, limits);
      // Runs that wrote nothing leave nothing behind (non-recursive: only if empty).
      if (!files.length && !omitted) await Deno.remove(workDir).catch(() => {});
      return {
        ok: reply.ok,
        stdout: reply.stdout,
        stderr: reply.stderr,
        ...(reply.error !== undefined ? { error: reply.error } : {}),
        timedOut: reply.timedOut,
        files,
        filesOmitted: omitted,
        workDir,
        ms: performance.now() - started,
      };
    } finally {
      clearTimeout(deadline);
      clearInterval(memory);
      req.signal?.removeEventListener("abort", onAbort);
    }
  }
}

function killedMessage(why: RunResult["killed"], timeoutMs: number, memoryMb: number): string {
  switch (why) {
    case "timeout":
      return `stopped by the time limit of ${timeoutMs / 1000} s (the process was killed)`;
    case "memory":
      return `stopped: the sandbox used more than ${memoryMb} MB of memory (the process was killed)`;
    case "cancelled":
      return "cancelled";
    default:
      return "the Python interpreter crashed; a fresh one is started for the next run";
  }
}

function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}
