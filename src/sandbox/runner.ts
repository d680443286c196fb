/**
 * {@link SandboxRunner} over Pyodide in separate OS processes, one per run:
 * the process that ran a piece of code is killed after its result, so
 * nothing the code left behind (a scheduled callback, a patched module, a
 * thread still spinning) reaches the next run. The next process is started
 * in the background from the memory snapshot, so a run is usually warm.
 *
 * @module
 */
import type { SandboxSetup } from "./protocol.ts";
import { collectOutputFiles } from "./output_files.ts";
import { FLOOD, pipeLimits, SandboxProcess } from "./sandbox_process.ts";
import type { RunRequest, RunResult, SandboxLimits, SandboxRunner } from "./types.ts";
import { dirBytes, pruneRuns } from "./work_dirs.ts";

export interface PyodideSandboxOptions extends SandboxSetup {
  limits: SandboxLimits;
}

/** How often the process's memory and its work directory's size are looked at. */
const POLL_MS = 50;
/**
 * The runtime around the WebAssembly heap (V8, the worker, Pyodide's JS) is
 * about 200 MB; the process is killed when its resident size passes the heap
 * cap by more than this.
 */
const RSS_HEADROOM_MB = 384;

type Killed = NonNullable<RunResult["killed"]>;

export class PyodideSandbox implements SandboxRunner {
  readonly limits: SandboxLimits;
  readonly #setup: SandboxSetup;
  /** The prewarmed process the next run takes. */
  #proc?: SandboxProcess;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  /** Runs asked for and not yet finished. */
  #queued = 0;
  /** The processes of runs in progress (killed by close). */
  readonly #running = new Set<SandboxProcess>();
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

  /** Resolves when the prewarmed interpreter (the next run's) is ready. */
  async ready(): Promise<{ ms: number; fromSnapshot: boolean; pid: number; workDir: string }> {
    const proc = this.#process();
    return { ...(await proc.ready), pid: proc.pid, workDir: proc.workDir };
  }

  run(req: RunRequest): Promise<RunResult> {
    this.#queued++;
    const result = this.#queue.then(() => this.#run(req)).finally(() => {
      this.#queued--;
      // A fresh interpreter for the next run, started once this result is
      // out (starting it competes for the CPU the result still needs), and
      // only if no run is waiting (that one starts its own).
      Deno.unrefTimer(setTimeout(() => {
        if (this.#queued === 0) this.prewarm();
      }, 0));
    });
    this.#queue = result.catch(() => {});
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const proc = this.#proc;
    this.#proc = undefined;
    for (const running of this.#running) running.kill("closed");
    // Every run asked for has its result (cancelled) before close returns.
    await this.#queue;
    if (proc) {
      proc.kill("closed");
      await proc.exited;
      await Deno.remove(proc.workDir).catch(() => {}); // unused: empty
    }
  }

  /** The prewarmed process, started (with its own new run directory) if there is none. */
  #process(): SandboxProcess {
    if (this.#closed) throw new Error("the sandbox is closed");
    if (!this.#proc) {
      const { workRoot, snapshotPath } = this.#setup;
      Deno.mkdirSync(workRoot, { recursive: true });
      if (snapshotPath) Deno.mkdirSync(dirname(snapshotPath), { recursive: true });
      const workDir = Deno.makeTempDirSync({ dir: workRoot, prefix: "run-" });
      const limits = pipeLimits(this.limits.maxOutputChars);
      const proc = new SandboxProcess({ ...this.#setup, workDir }, this.limits.memoryMb, limits);
      this.#proc = proc;
      proc.exited.then(() => {
        if (this.#proc === proc) this.#proc = undefined;
      });
      void pruneRuns(workRoot, this.limits.keepRuns, workDir);
    }
    return this.#proc;
  }

  async #run(req: RunRequest): Promise<RunResult> {
    const started = performance.now();
    const limits = this.limits;
    const timeoutMs = req.timeoutMs ?? limits.timeoutMs;
    let workDir = "";
    let proc: SandboxProcess;
    const fail = (error: string, killed?: Killed): RunResult => ({
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
    if (this.#closed) return fail("the sandbox is closed", "cancelled");
    try {
      proc = this.#process();
      // This run owns the process: the next run gets a new one.
      this.#proc = undefined;
      this.#running.add(proc);
      proc.exited.then(() => this.#running.delete(proc));
      workDir = proc.workDir;
      await proc.ready;
    } catch (e) {
      if (this.#closed) return fail("the sandbox is closed", "cancelled");
      const message = (e as Error).message;
      return fail(
        message.startsWith("the sandbox") ? message : `the sandbox could not start: ${message}`,
      );
    }
    const id = this.#nextId++;
    let killed: Killed | undefined;
    const kill = (why: Killed) => {
      killed ??= why;
      proc.kill(why);
    };
    // The watchdog lives until the process is gone, not until a reply: the
    // interrupt fires at timeoutMs inside the process, this kill later.
    const deadline = setTimeout(() => kill("timeout"), timeoutMs + limits.graceMs);
    const quota = limits.maxWorkMb * 1024 * 1024;
    let measuring = false;
    const poll = setInterval(() => {
      if ((proc.rssMb() ?? 0) > limits.memoryMb + RSS_HEADROOM_MB) kill("memory");
      if (measuring) return; // a large directory takes longer than one poll
      measuring = true;
      dirBytes(workDir, quota).then((bytes) => {
        if (bytes > quota) kill("disk");
      }).finally(() => measuring = false);
    }, POLL_MS);
    const onAbort = () => kill("cancelled");
    req.signal?.addEventListener("abort", onAbort, { once: true });
    if (req.signal?.aborted) onAbort();
    let reply;
    try {
      reply = await Promise.race([
        proc.run({
          type: "run",
          id,
          code: req.code,
          argv: req.argv ?? ["<code>"],
          timeoutMs,
          maxOutputChars: limits.maxOutputChars,
        }),
        proc.exited.then(() => undefined),
      ]);
    } finally {
      req.signal?.removeEventListener("abort", onAbort);
    }
    // One run per process: whatever the code left running ends here. The
    // result need not wait for the exit (about 10 ms), but the watchdog does.
    proc.kill("done");
    proc.exited.then(async () => {
      clearTimeout(deadline);
      clearInterval(poll);
      // Anything written between the signal and the exit still meets the quota.
      if (await dirBytes(workDir, quota) > quota) {
        await Deno.remove(workDir, { recursive: true }).catch(() => {});
      }
    });
    if (proc.killedFor === FLOOD) killed ??= "output";
    if (proc.killedFor === "closed") killed ??= "cancelled";
    // The final size, as the last poll may have missed the end of the run.
    if (!killed && await dirBytes(workDir, quota) > quota) killed = "disk";
    if (killed === "disk") {
      // Over the quota nothing is kept: the disk is what the limit protects.
      await Deno.remove(workDir, { recursive: true }).catch(() => {});
      return fail(killedMessage("disk", timeoutMs, limits), "disk");
    }
    const { files, omitted } = await collectOutputFiles(workDir, limits);
    // Runs that wrote nothing leave nothing behind (non-recursive: only if empty).
    if (!files.length && !omitted) await Deno.remove(workDir).catch(() => {});
    if (!reply || killed) {
      // Output is lost with the process; files written so far are not.
      return {
        ...fail(killedMessage(killed, timeoutMs, limits), killed ?? "crashed"),
        files,
        filesOmitted: omitted,
      };
    }
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
  }
}

function killedMessage(why: Killed | undefined, timeoutMs: number, limits: SandboxLimits): string {
  switch (why) {
    case "timeout":
      return `stopped by the time limit of ${timeoutMs / 1000} s (the process was killed)`;
    case "memory":
      return `stopped: the sandbox used more than ${limits.memoryMb} MB of memory (the process was killed)`;
    case "disk":
      return `stopped: the run wrote more than ${limits.maxWorkMb} MB to its work directory (the process was killed and its files removed)`;
    case "output":
      return "stopped: the code wrote too much to the sandbox's protocol pipe (the process was killed)";
    case "cancelled":
      return "cancelled";
    default:
      return "the Python interpreter crashed; a fresh one is started for the next run";
  }
}

function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}
