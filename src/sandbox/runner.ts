/**
 * {@link SandboxRunner} over Pyodide in separate OS processes, one per run:
 * the process that ran a piece of code is killed after its result, so
 * nothing the code left behind (a scheduled callback, a patched module, a
 * thread still spinning) reaches the next run. The next process is started
 * in the background from the memory snapshot, so a run is usually warm; with
 * a spare beside it (`spareProcesses`), so is a run straight after another.
 *
 * @module
 */
import { COPY_OUT_MS, type SandboxSetup, stagingDir } from "./protocol.ts";
import { prepareDenoDir, saveSeed, seedDir } from "./deno_cache.ts";
import { collectOutputFiles } from "./output_files.ts";
import { FLOOD, pipeLimits, SandboxProcess } from "./sandbox_process.ts";
import type { RunRequest, RunResult, SandboxLimits, SandboxRunner } from "./types.ts";
import { dirname, killedMessage, MAX_ERROR_CHARS, recap } from "./run_text.ts";
import { type DiskUse, diskUse, pruneRuns, removeTree, runPrefix } from "./work_dirs.ts";
import { errorMessage } from "../util/errors.ts";
import { realTimers, type Timers } from "../util/misc.ts";
import { makePrivateDir, makePrivateDirSync } from "../util/private_files.ts";

export interface PyodideSandboxOptions extends SandboxSetup {
  limits: SandboxLimits;
  /**
   * Prewarmed processes kept beside the one the next run takes, so that a
   * run straight after another takes a ready one too (0: none; default 1).
   * Each still runs exactly one run.
   */
  spareProcesses?: number;
  /** The clock of each run's deadlines (its time limit and copying out); tests pass fake ones. */
  timers?: Timers;
  /** How long a running process may go without a memory report before it is killed (default 2 s). */
  reportTimeoutMs?: number;
}

/** An idle prewarmed process, as {@link PyodideSandbox.idle} reports it. */
export interface IdleProcess {
  pid: number;
  workDir: string;
  /** False when it could not start (it is gone). */
  ready: boolean;
}

/** How often the process's memory reports are looked at… */
const POLL_MS = 50;
/** …and every this many polls, the run directory's size. */
const DISK_POLL_EVERY = 5;
/**
 * The runtime around the WebAssembly heap (V8, the worker, Pyodide's JS) is
 * about 200 MB; the process is killed when its resident size passes the heap
 * cap by more than this.
 */
const RSS_HEADROOM_MB = 384;
/**
 * A running process reports its resident size every 100 ms; one silent
 * this long is killed (its memory can no longer be vouched for).
 */
const REPORT_TIMEOUT_MS = 2_000;

type Killed = NonNullable<RunResult["killed"]>;

export class PyodideSandbox implements SandboxRunner {
  readonly limits: SandboxLimits;
  readonly #setup: SandboxSetup;
  readonly #spares: number;
  readonly #timers: Timers;
  readonly #reportTimeoutMs: number;
  /** Prewarmed processes not yet taken by a run, the next run's first. */
  #idle: SandboxProcess[] = [];
  /** The background filling of {@link #idle}, while it goes. */
  #filling?: Promise<void>;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  /** Runs asked for and not yet finished. */
  #queued = 0;
  /** The processes of runs in progress (killed by close). */
  readonly #running = new Set<SandboxProcess>();
  #closed = false;
  /** Removals of processes' private caches still under way (close waits for them). */
  readonly #cleanups = new Set<Promise<void>>();
  /**
   * Each process's preparation once ready, before its run is sent (in the
   * background while it waits prewarmed): saving the cache seed, then
   * measuring what its own start-up left in its run directory.
   */
  readonly #prepared = new WeakMap<SandboxProcess, Promise<DiskUse>>();

  constructor(opts: PyodideSandboxOptions) {
    const { limits, spareProcesses, timers, reportTimeoutMs, ...setup } = opts;
    this.limits = limits;
    this.#setup = setup;
    this.#spares = Math.max(0, Math.floor(spareProcesses ?? 1));
    this.#timers = timers ?? realTimers;
    this.#reportTimeoutMs = reportTimeoutMs ?? REPORT_TIMEOUT_MS;
  }

  /**
   * Starts the next run's process now (or after `delayMs`) and then, once it
   * is ready, the spares one at a time (processes starting side by side
   * delay each other). Stops while a run waits: that run takes what is there.
   */
  prewarm(delayMs = 0): void {
    if (delayMs <= 0) {
      if (!this.#closed) this.#filling ??= this.#fill().finally(() => this.#filling = undefined);
      return;
    }
    // Later, so starting the process does not compete with drawing the prompt;
    // unref'd, so it never keeps the program alive.
    Deno.unrefTimer(setTimeout(() => this.prewarm(), delayMs));
  }

  /** Resolves when the prewarmed interpreter (the next run's) is ready. */
  async ready(): Promise<{ ms: number; fromSnapshot: boolean; pid: number; workDir: string }> {
    const proc = this.#idle[0] ?? this.#start();
    return { ...(await proc.ready), pid: proc.pid, workDir: proc.workDir };
  }

  /**
   * Fills the idle processes as {@link prewarm} does, and resolves once that
   * is done with them (the next run's first).
   */
  async idle(): Promise<IdleProcess[]> {
    this.prewarm();
    await this.#filling;
    return await Promise.all(this.#idle.map(async (p) => ({
      pid: p.pid,
      workDir: p.workDir,
      ready: await p.ready.then(() => true, () => false),
    })));
  }

  async #fill(): Promise<void> {
    try {
      while (!this.#closed && this.#queued === 0 && this.#idle.length < 1 + this.#spares) {
        const proc = this.#start();
        await proc.ready;
      }
    } catch {
      // The next run reports why (e.g. the work directory cannot be made).
    }
  }

  run(req: RunRequest): Promise<RunResult> {
    this.#queued++;
    const result = this.#queue.then(() => this.#run(req)).finally(() => {
      this.#queued--;
      // Fresh interpreters for the next runs, started once this result is
      // out (starting them competes for the CPU the result still needs), and
      // only if no run is waiting (that one takes a spare or starts its own).
      Deno.unrefTimer(setTimeout(() => {
        if (this.#queued === 0) this.prewarm();
      }, 0));
    });
    this.#queue = result.catch(() => {});
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle;
    this.#idle = [];
    for (const running of this.#running) running.kill("closed");
    for (const proc of idle) proc.kill("closed");
    // Every run asked for has its result (cancelled) before close returns.
    await this.#queue;
    for (const proc of idle) {
      await proc.exited;
      await removeTree(dirname(proc.workDir)); // unused
    }
    await Promise.all(this.#cleanups);
  }

  /** Starts a prewarmed process (with its own new run directory), last in the idle list. */
  #start(): SandboxProcess {
    if (this.#closed) throw new Error("the sandbox is closed");
    const { workRoot, snapshotPath } = this.#setup;
    makePrivateDirSync(workRoot);
    if (snapshotPath) makePrivateDirSync(dirname(snapshotPath));
    const runDir = Deno.makeTempDirSync({ dir: workRoot, prefix: runPrefix() });
    const workDir = `${runDir}/work`;
    makePrivateDirSync(workDir);
    const limits = pipeLimits(this.limits.maxOutputChars);
    const seed = seedDir(snapshotPath);
    prepareDenoDir(`${runDir}/deno`, seed);
    const proc = new SandboxProcess(
      {
        ...this.#setup,
        workDir,
        quotaBytes: this.limits.maxWorkMb * 1024 * 1024,
        rssLimitMb: this.limits.memoryMb + RSS_HEADROOM_MB,
      },
      this.limits.memoryMb,
      limits,
      `${runDir}/deno`,
    );
    this.#idle.push(proc);
    // Ready and nothing run yet: its cache holds only our own start-up.
    const prepared = proc.ready
      .then(() => seed ? saveSeed(`${runDir}/deno`, seed) : undefined)
      .then(() => diskUse(runDir));
    prepared.catch(() => {}); // a process that never starts is reported by its run
    this.#prepared.set(proc, prepared);
    const cleanup = proc.exited.then(async () => {
      // One that died idle (killed from outside, out of memory) is not taken by a run.
      this.#idle = this.#idle.filter((p) => p !== proc);
      // The private Deno cache goes with its process, and a copy-out it did
      // not finish (never renamed onto the work directory); an empty run directory too.
      await removeTree(`${runDir}/deno`);
      await removeTree(stagingDir(workDir));
      await Deno.remove(workDir).then(() => Deno.remove(runDir)).catch(() => {});
    });
    this.#cleanups.add(cleanup);
    cleanup.finally(() => this.#cleanups.delete(cleanup));
    // Not the directories of the other processes alive (idle or running).
    const live = [...this.#idle, ...this.#running].map((p) => dirname(p.workDir));
    void pruneRuns(workRoot, this.limits.keepRuns, live);
    return proc;
  }

  async #run(req: RunRequest): Promise<RunResult> {
    const started = performance.now();
    const limits = this.limits;
    const timeoutMs = req.timeoutMs ?? limits.timeoutMs;
    let workDir = "";
    let proc: SandboxProcess;
    let startUse: DiskUse = { bytes: 0 };
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
      // This run owns the process: the next run gets another.
      proc = this.#idle.shift() ?? this.#start();
      this.#idle = this.#idle.filter((p) => p !== proc);
      this.#running.add(proc);
      proc.exited.then(() => this.#running.delete(proc));
      workDir = proc.workDir;
      await proc.ready;
      // What the process's own start left in its Deno cache is not the run's.
      startUse = await this.#prepared.get(proc) ?? startUse;
    } catch (e) {
      if (this.#closed) return fail("the sandbox is closed", "cancelled");
      const message = errorMessage(e);
      return fail(
        message.startsWith("the sandbox") ? message : `the sandbox could not start: ${message}`,
      );
    }
    const id = this.#nextId++;
    let killed: Killed | undefined;
    /** Why the run's files were not kept, in words, when they were not… */
    let diskDetail: string | undefined;
    /** …and whether that was the quota (measured past it), so the result may say so. */
    let diskOver = false;
    const kill = (why: Killed, detail?: string, overQuota = false) => {
      if (why === "disk") {
        diskDetail ??= detail;
        diskOver ||= overQuota;
      }
      killed ??= why;
      proc.kill(why);
    };
    if ("error" in startUse) {
      kill("disk", `the run directory could not be measured: ${startUse.error}`);
    }
    const startBytes = "bytes" in startUse ? startUse.bytes : 0;
    // The watchdog lives until the process is gone, not until a reply: the
    // interrupt fires at timeoutMs inside the process, this kill later.
    const timers = this.#timers;
    let deadline = timers.setTimeout(() => kill("timeout"), timeoutMs + limits.graceMs);
    // The run has ended; its files are being copied out by our own code.
    proc.onCopying = () => {
      timers.clearTimeout(deadline);
      deadline = timers.setTimeout(() => kill("timeout"), COPY_OUT_MS);
    };
    const quota = limits.maxWorkMb * 1024 * 1024;
    const runDir = dirname(workDir);
    /** The quota, checked on the whole run directory (the files and the private Deno cache). */
    const measure = async () => {
      // A process already being stopped (closed, timed out, over memory) is not measured:
      // its directory may be going away, and why it stopped is already said.
      if (proc.killedFor !== undefined) return;
      const use = await diskUse(runDir, startBytes + quota);
      if (proc.killedFor !== undefined) return;
      if ("error" in use) kill("disk", `the run directory could not be measured: ${use.error}`);
      else if (use.bytes - startBytes > quota) kill("disk", undefined, true);
    };
    let measuring = false;
    let polls = 0;
    proc.expectReports();
    const poll = setInterval(() => {
      // Fails closed: a process whose memory reports stop is killed (one
      // already killed, e.g. for the size it reported, is silent for that).
      const silence = this.#reportTimeoutMs;
      if (proc.killedFor === undefined && proc.reportAge > silence) {
        proc.memoryDetail ??= `it stopped reporting its memory use for ${silence} ms`;
        proc.memoryUnmeasured = true;
        kill("memory");
      }
      if (proc.killedFor === "memory") killed ??= "memory";
      // Only the private Deno cache can grow on disk while the run goes (/work
      // is in memory): looked at less often.
      if (++polls % DISK_POLL_EVERY !== 0) return;
      if (measuring) return; // a large directory takes longer than one poll
      measuring = true;
      measure().finally(() => measuring = false);
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
    proc.exited.then(() => {
      timers.clearTimeout(deadline);
      clearInterval(poll);
    });
    if (proc.killedFor === FLOOD) killed ??= "output";
    if (proc.killedFor === "memory") killed ??= "memory";
    // Closing the sandbox cancels its runs, whatever a poll noticed as the process went.
    if (proc.killedFor === "closed") killed = "cancelled";
    if (reply?.disk) kill("disk", String(reply.disk).slice(0, 300), reply.diskOverQuota === true);
    if (reply && killed === undefined) {
      // Once more after the run: what the copy-out left, measured as the disk counts it.
      const kept = await diskUse(workDir, quota);
      if ("error" in kept) kill("disk", `the run's files could not be measured: ${kept.error}`);
      else if (kept.bytes > quota) kill("disk", undefined, true);
    }

    if (killed === "disk") {
      // Over the quota nothing is kept: the disk is what the limit protects.
      await proc.exited;
      await removeTree(workDir);
      await makePrivateDir(workDir).catch(() => {});
      const message = diskOver
        ? killedMessage("disk", timeoutMs, limits)
        : "stopped: the run's files were not kept";
      return {
        ...fail(diskDetail ? `${message}: ${diskDetail}` : message, "disk"),
        stdout: recap(reply?.stdout, limits.maxOutputChars),
        stderr: recap(reply?.stderr, limits.maxOutputChars),
      };
    }
    const collected = await collectOutputFiles(workDir, limits);
    if ("error" in collected) return fail(`stopped: ${collected.error}`, "disk");
    const { files, omitted } = collected;
    if (!reply || killed) {
      // Output is lost with the process (and the files, unless the run ended).
      const unmeasured = killed === "memory" && proc.memoryUnmeasured;
      const message = unmeasured
        ? `stopped: the sandbox's memory could not be checked against its ${limits.memoryMb} MB limit (the process was killed)`
        : killedMessage(killed, timeoutMs, limits);
      const detail = killed === "memory" ? proc.memoryDetail : undefined;
      return {
        ...fail(detail ? `${message}: ${detail}` : message, killed ?? "crashed"),
        files,
        filesOmitted: omitted,
      };
    }
    return {
      ok: reply.ok,
      stdout: recap(reply.stdout, limits.maxOutputChars),
      stderr: recap(reply.stderr, limits.maxOutputChars),
      ...(reply.error !== undefined ? { error: recap(reply.error, MAX_ERROR_CHARS) } : {}),
      timedOut: reply.timedOut,
      files,
      filesOmitted: omitted,
      workDir,
      ms: performance.now() - started,
    };
  }
}
