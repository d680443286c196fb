/**
 * The sandbox's contract with the rest of the program: run Python, get its
 * output and the files it wrote. Tools depend on this interface, not on
 * Pyodide, so tests and other runners can stand in.
 *
 * @module
 */

/** Limits of one run; every one is configurable (`[sandbox]`). */
export interface SandboxLimits {
  /** Wall clock: the code is interrupted at this time… */
  timeoutMs: number;
  /** …and its process killed this much later if it has not stopped. */
  graceMs: number;
  /** The process is killed past this resident size; also the WebAssembly heap cap. */
  memoryMb: number;
  /** Characters kept of stdout and of stderr, each (head and tail). */
  maxOutputChars: number;
  /** Output files returned per run. */
  maxFiles: number;
  /** Largest output file returned. */
  maxFileBytes: number;
  /** Disk quota of one run's work directory; the process is killed past it. */
  maxWorkMb: number;
  /** Run directories kept in the work root (the newest); older ones are removed. */
  keepRuns: number;
}

export interface RunRequest {
  code: string;
  /** `sys.argv`; the first element is the script's name. */
  argv?: string[];
  /** Overrides the configured time limit (the operator's `exec --timeout`). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A file the code wrote under WORK_DIR. */
export interface OutputFile {
  /** Relative to WORK_DIR. */
  name: string;
  bytes: number;
  /** Where it is on the host. */
  path: string;
  /** Set when a file was not returned whole (too large). */
  note?: string;
}

export interface RunResult {
  ok: boolean;
  stdout: string;
  stderr: string;
  /** One line: the Python exception, or why the run was stopped. */
  error?: string;
  /** Why the process was killed, when it was. */
  killed?: "timeout" | "memory" | "disk" | "output" | "crashed" | "cancelled";
  timedOut: boolean;
  files: OutputFile[];
  /** Files beyond `maxFiles` that were not listed. */
  filesOmitted: number;
  /** The run's work directory on the host. */
  workDir: string;
  ms: number;
}

/** Runs Python code in isolation. */
export interface SandboxRunner {
  readonly limits: SandboxLimits;
  /** Starts an interpreter in the background (after `delayMs`) so the next run is warm. */
  prewarm(delayMs?: number): void;
  run(req: RunRequest): Promise<RunResult>;
  close(): Promise<void>;
}

/** What the sandbox tools get through `ToolDeps.sandbox`. */
export interface SandboxDeps {
  runner: SandboxRunner;
  /** The operator's scripts (writable by the agent for save_as, read-only to Python). */
  scriptsDir?: string;
  /** Import names the local packages directory offers (for the import warnings). */
  packages?: readonly string[];
}
