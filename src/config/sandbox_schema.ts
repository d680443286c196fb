/**
 * The `[sandbox]` table: where Python's directories are and what limits a
 * run. Relative paths are relative to the config file; `~` is the home
 * directory.
 *
 * @module
 */
import { z } from "zod";

export const SandboxConfigSchema = z.strictObject({
  /** Mounted read-only at /data, /data1, … (DATA_DIR is the first). */
  data_dirs: z.array(z.string()).default([]),
  /** Operator scripts, read-only at /scripts; save_as writes here (from the agent, not Python). */
  scripts_dir: z.string().default("../scripts"),
  /** Each run gets a fresh directory below this one: the one writable place. */
  work_dir: z.string().default("~/.local/state/accel-agent/work"),
  /** A local Pyodide distribution (pyodide-lock.json + wheels) or loose wheels; "" for none. */
  packages_dir: z.string().default(""),
  /** Pyodide's assets; "" uses the pinned npm package. */
  pyodide_dir: z.string().default(""),
  /** Holds the interpreter's memory snapshot. */
  cache_dir: z.string().default("~/.cache/accel-agent"),
  snapshot: z.boolean().default(true),
  /**
   * "eager": V8 optimizes the interpreter's code in the background while a
   * prewarmed process waits (about 0.9 CPU-seconds more per process; runs
   * about 2.5 times as fast). "hot": only code that turns out hot, during the run.
   */
  optimize: z.enum(["eager", "hot"]).default("eager"),
  /** Start an interpreter in the background when the agent starts. */
  prewarm: z.boolean().default(true),
  /**
   * Prewarmed processes kept beside the one the next run takes, so a run
   * straight after another does not wait for a process to start (each costs
   * an idle process's memory; see README). 0 turns it off.
   */
  spare_processes: z.int().min(0).max(4).default(1),
  /** At most one day. */
  timeout_s: z.number().positive().max(86_400).default(30),
  grace_ms: z.int().min(0).max(60_000).default(500),
  memory_mb: z.int().min(64).default(512),
  max_output_chars: z.int().min(200).default(20_000),
  max_files: z.int().min(0).default(20),
  max_file_bytes: z.int().min(0).default(10_000_000),
  /** Disk quota of one run's work directory, in MB: the run is killed past it. */
  max_work_mb: z.int().min(1).default(100),
  /** Run directories kept (the newest); older ones are removed when a run starts. */
  keep_runs: z.int().min(1).default(50),
}).prefault({});

export type SandboxConfig = z.infer<typeof SandboxConfigSchema>;
