/**
 * One sandbox OS process, seen from the agent: how it is started (its own
 * narrow permission flags, an empty environment), its JSON-line protocol
 * (authenticated, bounded), its resident memory, and killing it.
 *
 * @module
 */
import type { ProcessSetup, RunMessage, RunReply, SandboxReply } from "./protocol.ts";

/** The argument that starts the compiled executable in its sandbox role. */
export const SANDBOX_ROLE_ARG = "__accel_sandbox_process";

/** True inside a `deno compile`d executable, where no `deno` program exists to call. */
export function isCompiled(): boolean {
  return import.meta.url.includes("/deno-compile-");
}

const PROCESS_MAIN = new URL("./process_main.ts", import.meta.url);
const CONFIG = new URL("../../deno.json", import.meta.url);
/** Loading the worker's modules needs read access to them: this directory (our own code). */
const SANDBOX_SRC = new URL(".", import.meta.url).pathname.replace(/\/$/, "");

/**
 * The command line of a sandbox process. Under `deno run` the grants are
 * flags: no net, env, run, ffi or sys at all; read only the assets, the
 * directories and this run's own work directory; write only that work
 * directory (and the snapshot's). The compiled executable cannot be given
 * flags, so it starts itself in its sandbox role and revokes what it does
 * not need; in both cases the worker narrows reads and writes again.
 */
export function sandboxCommand(setup: ProcessSetup, memoryMb: number): Deno.Command {
  const snapshotDir = setup.snapshotPath?.slice(0, setup.snapshotPath.lastIndexOf("/"));
  // The process (not the worker) writes the snapshot: read and write on its directory.
  const read = [
    setup.pyodideDir,
    ...setup.dataDirs,
    setup.workDir,
    ...[setup.scriptsDir, setup.packagesDir, snapshotDir].filter((p): p is string => !!p),
  ];
  const write = [setup.workDir, ...(snapshotDir ? [snapshotDir] : [])];
  const v8 = `--v8-flags=${v8Flags(setup, memoryMb).join(",")}`;
  const args = isCompiled() ? [SANDBOX_ROLE_ARG] : [
    "run",
    "--quiet",
    "--no-prompt",
    "--cached-only",
    "--unstable-worker-options",
    `--config=${CONFIG.pathname}`,
    `--allow-read=${[...read, SANDBOX_SRC].join(",")}`,
    `--allow-write=${write.join(",")}`,
    v8,
    PROCESS_MAIN.pathname,
  ];
  return new Deno.Command(Deno.execPath(), {
    args,
    clearEnv: true,
    // Deno finds its module cache here; nothing secret is passed.
    env: denoDirEnv(setup.pyodideDir),
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

/** `DENO_DIR` recovered from the cached package's path, without reading the environment. */
function denoDirEnv(pyodideDir: string): Record<string, string> {
  const at = pyodideDir.indexOf("/npm/registry.npmjs.org/");
  return at > 0 ? { DENO_DIR: pyodideDir.slice(0, at) } : {};
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
  #stderr = "";
  /** Resolves when the interpreter is ready; rejects when it cannot start. */
  readonly ready: Promise<{ ms: number; fromSnapshot: boolean; packages: string[] }>;
  /** Resolves with a reason when the process ends. */
  readonly exited: Promise<string>;
  /** This process's own work directory, the only one it may read or write. */
  readonly workDir: string;
  #killedFor?: string;

  constructor(setup: ProcessSetup, memoryMb: number, limits: PipeLimits) {
    this.workDir = setup.workDir;
    this.#child = sandboxCommand(setup, memoryMb).spawn();
    this.#writer = this.#child.stdin.getWriter();
    let onReady!: (r: { ms: number; fromSnapshot: boolean; packages: string[] }) => void;
    let onFail!: (e: Error) => void;
    this.ready = new Promise((res, rej) => {
      onReady = res;
      onFail = rej;
    });
    this.ready.catch(() => {}); // observed by whoever awaits it
    this.#readStderr();
    const replies = this.#readReplies(limits, (m) => {
      if (m.type === "ready") onReady(m);
      else if (m.type === "result") this.#pending.get(m.id)?.(m);
      else this.#stderr = `${m.message}\n${this.#stderr}`;
    });
    this.exited = Promise.all([this.#child.status, replies]).then(() => {
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

  /** Resident set size in MiB, from /proc; undefined where there is no /proc. */
  rssMb(): number | undefined {
    try {
      const status = Deno.readTextFileSync(`/proc/${this.#child.pid}/status`);
      const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
      return kb ? Number(kb) / 1024 : undefined;
    } catch {
      return undefined;
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
    const lines = this.#stderr.trim().split("\n").filter((l) => l.trim());
    return lines[0]?.replace(/^error: /, "").trim() ?? "it exited";
  }

  async #readStderr(): Promise<void> {
    // Read to the end (a full pipe would block the process) but keep little.
    for await (const chunk of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
      if (this.#stderr.length < 4000) this.#stderr += chunk.slice(0, 4000);
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
        if (line.startsWith(prefix)) {
          const reply = parseReply(line.slice(prefix.length));
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
