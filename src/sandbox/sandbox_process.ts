/**
 * One sandbox OS process, seen from the agent: how it is started (its own
 * narrow permission flags, an empty environment), its JSON-line protocol
 * (authenticated, bounded), its resident memory, and killing it.
 *
 * @module
 */
import type { MemoryReport, ProcessSetup, RunMessage, RunReply, SandboxReply } from "./protocol.ts";
import { ownNeeds } from "./role_grants.ts";

/** The argument that starts the compiled executable in its sandbox role. */
export const SANDBOX_ROLE_ARG = "__accel_sandbox_process";

/** True inside a `deno compile`d executable, where no `deno` program exists to call. */
export function isCompiled(): boolean {
  return import.meta.url.includes("/deno-compile-");
}

const PROCESS_MAIN = new URL("./process_main.ts", import.meta.url);
const CONFIG = new URL("../../deno.json", import.meta.url);
/** Loading the worker's modules needs read access to them: this directory (our own code). */
const SANDBOX_SRC = decodeURIComponent(new URL(".", import.meta.url).pathname).replace(/\/$/, "");

/**
 * The command line of a sandbox process. Under `deno run` the grants are
 * flags: no net, env, run, ffi or sys at all; read only the assets, the
 * directories and this run's own work directory; write only that work
 * directory and its staging directory (and the snapshot's directory). The
 * compiled executable cannot be given flags, so it starts itself in its
 * sandbox role and revokes what it does not need; in both cases the worker
 * narrows reads and writes again.
 *
 * Deno writes its module cache (transpiled modules, code cache) outside the
 * permission system, wherever `DENO_DIR` points: `denoDir` is this run's
 * own, private and thrown away with the run. No update check either (it
 * would look Deno's server up at every start).
 */
export function sandboxCommand(
  setup: ProcessSetup,
  memoryMb: number,
  denoDir: string,
): Deno.Command {
  // The process (not the worker) writes the run's files and the snapshot.
  const { read, write } = ownNeeds(setup);
  const v8 = `--v8-flags=${v8Flags(setup, memoryMb).join(",")}`;
  const args = isCompiled() ? [SANDBOX_ROLE_ARG] : [
    "run",
    "--quiet",
    "--no-prompt",
    "--cached-only",
    "--no-lock",
    "--unstable-worker-options",
    `--config=${decodeURIComponent(CONFIG.pathname)}`,
    `--allow-read=${[...read, SANDBOX_SRC].join(",")}`,
    `--allow-write=${write.join(",")}`,
    v8,
    decodeURIComponent(PROCESS_MAIN.pathname),
  ];
  return new Deno.Command(Deno.execPath(), {
    args,
    clearEnv: true,
    // Nothing secret is passed; nothing the host keeps is named.
    env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
}

/** The sandbox process's V8 flags (the compiled executable needs them baked in). */
export function v8Flags(setup: Pick<ProcessSetup, "optimize">, memoryMb: number): string[] {
  // 64 KiB WebAssembly pages: a MemoryError in Python instead of a kill.
  const flags = [`--wasm-max-mem-pages=${Math.max(256, Math.floor(memoryMb * 16))}`];
  // Without dynamic tiering V8 optimizes each function when it is first
  // compiled, on background threads: done while the prewarmed process waits,
  // instead of half-way through the next run (measured in bench/sandbox.ts).
  if ((setup.optimize ?? "eager") === "eager") flags.push("--no-wasm-dynamic-tiering");
  return flags;
}

/** Limits on what the process may print on its protocol pipe. */
export interface PipeLimits {
  /** Longest line, in characters (a result line holds stdout and stderr, JSON-escaped). */
  maxLineChars: number;
  /** All characters the process may write to stdout in its life. */
  maxTotalChars: number;
}

/** Pipe limits that fit a result of `maxOutputChars` of stdout and of stderr. */
export function pipeLimits(maxOutputChars: number): PipeLimits {
  // JSON escapes a character in at most 6 characters (\u0000); a surrogate pair in 12.
  const maxLineChars = 2 * 12 * maxOutputChars + 64 * 1024;
  return { maxLineChars, maxTotalChars: 2 * maxLineChars };
}

/** Bytes of the process's own stderr kept, for the message when it cannot start. */
const STDERR_KEEP = 4000;

/** Why a process was killed for what it printed. */
export const FLOOD = "output";

/**
 * A started sandbox process. It runs at most one piece of code: the runner
 * kills it after the result, so nothing the code left behind (threads,
 * timers, patched modules) outlives its run.
 */
export class SandboxProcess {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, (r: RunReply) => void>();
  /**
   * Prefix of every protocol line. It reaches the process on stdin before
   * its worker exists and is never given to the worker, so Python (which
   * can write to the process's stdout directly) cannot forge a reply.
   */
  readonly #nonce = crypto.randomUUID();
  /** The head of the process's stderr, as bytes (decoded only when shown). */
  #stderr = new Uint8Array(0);
  #fatal = "";
  /** When the last memory report came, and the largest resident size reported. */
  #lastReport = 0;
  #peakMb = 0;
  /** Resolves when the interpreter is ready; rejects when it cannot start. */
  readonly ready: Promise<{ ms: number; fromSnapshot: boolean; packages: string[] }>;
  /** Resolves with a reason when the process ends. */
  readonly exited: Promise<string>;
  /** This process's own work directory, where it writes the run's files when the run ends. */
  readonly workDir: string;
  #killedFor?: string;

  constructor(setup: ProcessSetup, memoryMb: number, limits: PipeLimits, denoDir: string) {
    this.workDir = setup.workDir;
    this.#child = sandboxCommand(setup, memoryMb, denoDir).spawn();
    this.#writer = this.#child.stdin.getWriter();
    let onReady!: (r: { ms: number; fromSnapshot: boolean; packages: string[] }) => void;
    let onFail!: (e: Error) => void;
    this.ready = new Promise((res, rej) => {
      onReady = res;
      onFail = rej;
    });
    this.ready.catch(() => {}); // observed by whoever awaits it
    const stderr = this.#readStderr(limits);
    const replies = this.#readReplies(limits, (m) => {
      if (m.type === "ready") onReady(m);
      else if (m.type === "result") this.#pending.get(m.id)?.(m);
      else if (m.type === "memory") this.#onMemory(m, setup.rssLimitMb);
      else if (m.type === "copying") this.onCopying?.();
      else this.#fatal = String(m.message).slice(0, 500);
    });
    this.exited = Promise.all([this.#child.status, replies, stderr]).then(() => {
      const why = this.#killedFor ?? this.#lastError();
      onFail(new Error(`the sandbox process could not start: ${why}`));
      return why;
    });
    this.#send({ type: "setup", setup, nonce: this.#nonce });
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Why the agent killed the process, if it did. */
  get killedFor(): string | undefined {
    return this.#killedFor;
  }

  /** Sends one run; resolves with its reply (never when the process dies first). */
  run(msg: RunMessage): Promise<RunReply> {
    return new Promise((resolve) => {
      this.#pending.set(msg.id, (r) => {
        this.#pending.delete(msg.id);
        resolve(r);
      });
      this.#send(msg);
    });
  }

  /** Starts the clock of the memory reports (the process sends them once it has the run). */
  expectReports(): void {
    this.#lastReport = performance.now();
  }

  /** Milliseconds since the last memory report (or since {@link expectReports}). */
  get reportAge(): number {
    return performance.now() - this.#lastReport;
  }

  /** The largest resident size the process reported, in MiB. */
  get peakMb(): number {
    return this.#peakMb;
  }

  /** Called when the run has ended and the process copies its files out. */
  onCopying?: () => void;

  /** Why the memory watchdog killed the process, in words, when it did. */
  memoryDetail?: string;
  /** Set when it was killed because its memory could not be measured (fail closed). */
  memoryUnmeasured = false;

  /**
   * A report from the process's watch. Fails closed: a reading that is an
   * error, zero or not a number is a kill (Deno reports 0 when it cannot
   * read the size), as is a size or a peak past the limit.
   */
  #onMemory(m: MemoryReport, limitMb: number): void {
    this.#lastReport = performance.now();
    const rss = Number(m.rssMb);
    const peak = m.maxRssMb === undefined ? 0 : Number(m.maxRssMb);
    const measured = typeof m.error !== "string" && Number.isFinite(rss) && rss > 0 &&
      Number.isFinite(peak) && peak >= 0;
    if (!measured) {
      const why = typeof m.error === "string" ? m.error : `a reading of ${m.rssMb} MB`;
      this.memoryDetail ??= `its memory use could not be measured (${why.slice(0, 200)})`;
      this.memoryUnmeasured = true;
      this.kill("memory");
      return;
    }
    const size = Math.max(rss, peak);
    this.#peakMb = Math.max(this.#peakMb, size);
    if (m.over || size > limitMb) {
      this.memoryDetail ??= `its resident size reached ${Math.round(size)} MB`;
      this.kill("memory");
    }
  }

  /** SIGKILL: nothing inside can delay it. */
  kill(reason: string): void {
    this.#killedFor ??= reason;
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  #send(msg: unknown): void {
    this.#writer.write(new TextEncoder().encode(`${JSON.stringify(msg)}\n`)).catch(() => {});
  }

  #lastError(): string {
    const text = `${this.#fatal}\n${new TextDecoder().decode(this.#stderr)}`;
    const lines = text.trim().split("\n").filter((l) => l.trim());
    return lines[0]?.replace(/^error: /, "").trim().slice(0, 500) ?? "it exited";
  }

  /**
   * Reads stderr to the end (a full pipe would block the process) as bytes:
   * keeps the first {@link STDERR_KEEP}, decodes nothing else, and kills the
   * process past the same total as stdout.
   */
  async #readStderr(limits: PipeLimits): Promise<void> {
    let total = 0;
    for await (const chunk of this.#child.stderr) {
      total += chunk.length;
      if (this.#stderr.length < STDERR_KEEP) {
        const keep = chunk.subarray(0, STDERR_KEEP - this.#stderr.length);
        const joined = new Uint8Array(this.#stderr.length + keep.length);
        joined.set(this.#stderr);
        joined.set(keep, this.#stderr.length);
        this.#stderr = joined;
      }
      if (total > limits.maxTotalChars) return this.kill(FLOOD);
    }
  }

  /**
   * Splits stdout into lines, looking only at each new chunk (a flood must
   * not cost the agent more than reading it once), and kills the process
   * past the line or total limits. Only lines with the nonce are replies.
   */
  async #readReplies(limits: PipeLimits, on: (m: SandboxReply) => void): Promise<void> {
    const prefix = `${this.#nonce} `;
    let partial: string[] = [];
    let partialLength = 0;
    let total = 0;
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      total += chunk.length;
      if (total > limits.maxTotalChars) return this.kill(FLOOD);
      const pieces = chunk.split("\n");
      for (let i = 0; i < pieces.length - 1; i++) {
        const line = partial.join("") + pieces[i];
        partial = [];
        partialLength = 0;
        // Python can write to the same pipe, but cannot know the nonce: what
        // it wrote before a line of ours (no newline) does not hide that line.
        const at = line.indexOf(prefix);
        if (at >= 0) {
          const reply = parseReply(line.slice(at + prefix.length));
          // Memory reports are the process's own, not output: they do not count.
          if (reply?.type === "memory" || reply?.type === "copying") total -= line.length - at + 1;
          if (reply) on(reply);
        }
      }
      const rest = pieces[pieces.length - 1] ?? "";
      partialLength += rest.length;
      if (partialLength > limits.maxLineChars) return this.kill(FLOOD);
      if (rest) partial.push(rest);
    }
  }
}

/** A protocol line, or undefined for anything else. */
function parseReply(line: string): SandboxReply | undefined {
  try {
    const m = JSON.parse(line) as SandboxReply;
    return typeof m === "object" && m !== null && typeof m.type === "string" ? m : undefined;
  } catch {
    return undefined;
  }
}
