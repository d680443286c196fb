/**
 * Messages between the agent, the sandbox process and the interpreter's
 * worker. The agent and the sandbox process speak them as JSON lines over
 * the process's stdin and stdout; the process and its worker as
 * `postMessage`s.
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
  /** Parent of every run's work directory: the one writable place. */
  workRoot: string;
  /** Memory snapshot to start from; written there when absent. */
  snapshotPath?: string;
}

/** Agent → sandbox process: run one piece of code. */
export interface RunMessage {
  type: "run";
  id: number;
  code: string;
  /** `sys.argv` (the first is the script's name). */
  argv: string[];
  /** Host directory mounted at /work for this run (created by the agent). */
  workDir: string;
  timeoutMs: number;
  /** Characters kept of stdout and of stderr, each (head and tail). */
  maxOutputChars: number;
}

/** Sandbox process → agent. */
export type SandboxReply =
  | { type: "ready"; ms: number; fromSnapshot: boolean; packages: string[] }
  | RunReply
  | { type: "fatal"; message: string };

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
  ms: number;
}
