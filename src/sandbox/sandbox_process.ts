/**
 * One sandbox OS process, seen from the agent: how it is started (its own
 * narrow permission flags, an empty environment), its JSON-line protocol,
 * its resident memory, and killing it.
 *
 * @module
 */
import type { RunMessage, RunReply, SandboxReply, SandboxSetup } from "./protocol.ts";

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
 * flags: no net, env, run, ffi or sys at all; read only the assets and the
 * directories; write only the work root. The compiled executable cannot be
 * given flags, so it starts itself in its sandbox role and revokes what it
 * does not need; in both cases the worker narrows reads and writes again.
 */
export function sandboxCommand(setup: SandboxSetup, memoryMb: number): Deno.Command {
  const snapshotDir = setup.snapshotPath?.slice(0, setup.snapshotPath.lastIndexOf("/"));
  // The process (not the worker) writes the snapshot: read and write on its directory.
  const read = [
    setup.pyodideDir,
    ...setup.dataDirs,
    setup.workRoot,
    ...[setup.scriptsDir, setup.packagesDir, snapshotDir].filter((p): p is string => !!p),
  ];
  const write = [setup.workRoot, ...(snapshotDir ? [snapshotDir] : [])];
  // 64 KiB WebAssembly pages: a MemoryError in Python instead of a kill.
  const v8 = `--v8-flags=--wasm-max-mem-pages=${Math.max(256, Math.floor(memoryMb * 16))}`;
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

/** `DENO_DIR` recovered from the cached package's path, without reading the environment. */
function denoDirEnv(pyodideDir: string): Record<string, string> {
  const at = pyodideDir.indexOf("/npm/registry.npmjs.org/");
  return at > 0 ? { DENO_DIR: pyodideDir.slice(0, at) } : {};
}

/** A started sandbox process. */
export class SandboxProcess {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, (r: RunReply) => void>();
  #stderr = "";
  /** Resolves when the interpreter is ready; rejects when it cannot start. */
  readonly ready: Promise<{ ms: number; fromSnapshot: boolean; packages: string[] }>;
  /** Resolves with a reason when the process ends. */
  readonly exited: Promise<string>;
  #killedFor?: string;

  constructor(setup: SandboxSetup, memoryMb: number) {
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
    const replies = this.#readReplies((m) => {
      if (m.type === "ready") onReady(m);
      else if (m.type === "result") this.#pending.get(m.id)?.(m);
      else this.#stderr = `${m.message}\n${this.#stderr}`;
    });
    this.exited = Promise.all([this.#child.status, replies]).then(() => {
      const why = this.#killedFor ?? this.#lastError();
      onFail(new Error(`the sandbox process could not start: ${why}`));
      return why;
    });
    this.#send({ type: "setup", setup });
  }

  get pid(): number {
    return this.#child.pid;
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
    for await (const chunk of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
      if (this.#stderr.length < 4000) this.#stderr += chunk;
    }
  }

  async #readReplies(on: (m: SandboxReply) => void): Promise<void> {
    let buffer = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const reply = parseReply(line);
        if (reply) on(reply);
      }
    }
  }
}

/** A protocol line, or undefined for anything else the runtime printed. */
function parseReply(line: string): SandboxReply | undefined {
  try {
    const m = JSON.parse(line) as SandboxReply;
    return typeof m === "object" && m !== null && typeof m.type === "string" ? m : undefined;
  } catch {
    return undefined;
  }
}
