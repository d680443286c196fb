/**
 * Messages between the agent, the sandbox process and the interpreter's
 * worker. The agent and the sandbox process speak them as JSON lines over
 * the process's stdin and stdout (replies prefixed with the setup's nonce);
 * the process and its worker over a private MessagePort.
 *
 * @module
 */

/** Mount points the Python code sees. */
export const PY_PATHS = {
  data: "/data",
  scripts: "/scripts",
  work: "/work",
} as const;

/** Everything the sandbox process needs to start its interpreter. */
export interface SandboxSetup {
  /** Directory holding `pyodide.asm.wasm`, `python_stdlib.zip`, the lock file. */
  pyodideDir: string;
  /** Host directories mounted read-only at /data, /data1, /data2… */
  dataDirs: string[];
  scriptsDir?: string;
  /** A local Pyodide distribution or plain wheels; never the network. */
  packagesDir?: string;
  /** Parent of every run's work directory (each process gets its own below it). */
  workRoot: string;
  /** Memory snapshot to start from; written there when absent. */
  snapshotPath?: string;
  /**
   * How V8 compiles the interpreter's WebAssembly: "eager" (the default)
   * optimizes every function as soon as it is first called, in the
   * background while the prewarmed process waits, so a run meets optimized
   * code; "hot" optimizes only functions that turn out hot, during the run
   * itself (less CPU per process, slower runs). See docs/architecture.md.
   */
  optimize?: "eager" | "hot";
  /**
   * The agent's own read and write grants, sent to the compiled executable's
   * sandbox role, which starts with them and revokes what it does not need
   * (see `role_grants.ts`). Absent under `deno run`, whose flags are narrow.
   */
  agentGrants?: AgentGrants;
}

/** The read and write grants of the agent, as computed from its configuration. */
export interface AgentGrants {
  read: string[];
  write: string[];
}

/** One process's setup: the shared one plus the run directory it alone may use. */
export interface ProcessSetup extends SandboxSetup {
  /**
   * Host directory that receives the files Python left in its in-memory
   * /work when the run ends, written by the process (never by the worker,
   * which has no write grant at all).
   */
  workDir: string;
  /** Disk quota of the files copied out, in bytes, counted as {@link entryCharge} does. */
  quotaBytes: number;
  /** The process's resident size limit in MiB: past it, it stops itself (and the agent kills it). */
  rssLimitMb: number;
}

/**
 * Where the process writes a run's files before they are whole: beside the
 * work directory, renamed onto it (empty until then) in one step, so a
 * copy-out that does not finish leaves nothing in the work directory.
 */
export function stagingDir(workDir: string): string {
  return `${workDir}.part`;
}

/**
 * Agent → sandbox process, the first line on stdin, read before the worker
 * starts: the setup, and the nonce that prefixes every reply line.
 */
export interface SetupMessage {
  type: "setup";
  setup: ProcessSetup;
  nonce: string;
}

/** Agent → sandbox process: run one piece of code. */
export interface RunMessage {
  type: "run";
  id: number;
  code: string;
  /** `sys.argv` (the first is the script's name). */
  argv: string[];
  timeoutMs: number;
  /** Characters kept of stdout and of stderr, each (head and tail). */
  maxOutputChars: number;
}

/** Sandbox process → agent. */
export type SandboxReply =
  | { type: "ready"; ms: number; fromSnapshot: boolean; packages: string[] }
  | RunReply
  | { type: "fatal"; message: string }
  | MemoryReport
  | { type: "copying" };

/**
 * Sent by the process's watch (a thread of its own, which Python cannot
 * reach) every {@link HEARTBEAT_MS} while code runs; `over` when it passed
 * its limit, `error` when it could not be measured. The agent kills the
 * process on either, and when the reports stop.
 */
export interface MemoryReport {
  type: "memory";
  /** The resident size now, in MiB (-1 with `error`). */
  rssMb: number;
  /** The peak resident size (getrusage), in MiB, when known and risen since the code began. */
  maxRssMb?: number;
  over?: boolean;
  /** Set when the resident size could not be read (or read as 0): a kill. */
  error?: string;
}

/**
 * How long the process may take to copy a finished run's files out (sent
 * as "copying" by its main thread, never by Python): the time limit's hard
 * kill waits this much longer from then. The work is bounded by the quota
 * and the entry cap (10,000 files took seconds on a busy machine), and a
 * copy-out cut short keeps nothing: ample room.
 */
export const COPY_OUT_MS = 60_000;

/** The process's main thread → its watch, once, at the process's start. */
export interface WatchInit {
  type: "init";
  nonce: string;
  /** The lock of the process's stdout (see `reply_line.ts`). */
  lock: SharedArrayBuffer;
  /** The resident size limit, in MiB. */
  limitMb: number;
  /** A path the watch may open and keep open: its reserved descriptor. */
  reservePath: string;
  /** Pyodide's interrupt buffer (2 = SIGINT). */
  interrupt: SharedArrayBuffer;
}

/** The process's main thread → its watch: the run has been handed to the interpreter. */
export interface WatchRun {
  type: "run";
  timeoutMs: number;
}

/** What the watch tells the main thread: it holds its descriptor and waits for the run… */
export const WATCH_READY = "ready";
/** …and the process is over its limit or unmeasurable. */
export const WATCH_STOP = "stop";

/** How often a running process reports its resident size. */
export const HEARTBEAT_MS = 100;

export interface RunReply {
  type: "result";
  id: number;
  ok: boolean;
  stdout: string;
  stderr: string;
  /** The Python exception's last line, or why the run failed. */
  error?: string;
  /** True when the time limit interrupted the code. */
  timedOut: boolean;
  /** Pyodide failed fatally: the process must be replaced. */
  fatal?: boolean;
  /** Why the files were not copied out (over the quota, unwritable, malformed), if they were not. */
  disk?: string;
  /** Set when that reason is the disk quota. */
  diskOverQuota?: boolean;
  ms: number;
}
