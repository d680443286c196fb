/**
 * A real Pyodide sandbox over temporary directories, for tests. The memory
 * snapshot is shared by every sandbox, so only the first start pays for it.
 *
 * @module
 */
import { defaultPyodideDir, PyodideSandbox, type SandboxLimits } from "../../src/sandbox/mod.ts";
import { removeAtUnload, removeTree } from "./temp.ts";
import type { Timers } from "../../src/util/misc.ts";

/**
 * One snapshot for every test run on the machine (not a new 31 MB file per
 * run): named by the Pyodide version, written atomically, replaced if damaged.
 */
const SNAPSHOT_DIR = `${Deno.env.get("TMPDIR") ?? "/tmp"}/accel-agent-test-snapshot`;
Deno.mkdirSync(SNAPSHOT_DIR, { recursive: true });
export const SNAPSHOT_PATH = `${SNAPSHOT_DIR}/pyodide-314.0.7.snapshot`;

/**
 * Every limit with room to spare on a busy machine; a test of one limit sets
 * that one (a time-limit test its `timeoutMs`, a memory test `memoryMb`…).
 */
export const TEST_LIMITS: SandboxLimits = {
  timeoutMs: 120_000,
  graceMs: 500,
  memoryMb: 512,
  maxOutputChars: 4_000,
  maxFiles: 10,
  maxFileBytes: 100_000,
  maxWorkMb: 100,
  keepRuns: 50,
};

export interface TestSandbox {
  sandbox: PyodideSandbox;
  /** The temporary directory holding the others (but a `scriptsDir` given from outside). */
  root: string;
  /** Host directories behind /data, /scripts and the work root. */
  dataDir: string;
  scriptsDir: string;
  workRoot: string;
  /** A directory the sandbox must never see (stands for the state dir, audit log…). */
  outsideDir: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A sandbox with a data dir holding `orbit.csv`, an empty scripts dir and a work root. */
export async function startTestSandbox(
  limits: Partial<SandboxLimits> = {},
  extra: {
    packagesDir?: string;
    scriptsDir?: string;
    optimize?: "eager" | "hot";
    spareProcesses?: number;
    timers?: Timers;
    /** Default 60 s: only the test of the memory reports' silence races it. */
    reportTimeoutMs?: number;
  } = {},
): Promise<TestSandbox> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "accel-agent-sbx-" }));
  const dataDir = `${root}/data`;
  const scriptsDir = extra.scriptsDir ?? `${root}/scripts`;
  const workRoot = `${root}/work`;
  const outsideDir = `${root}/outside`;
  try {
    for (const d of [dataDir, workRoot, outsideDir]) await Deno.mkdir(d);
    await Deno.mkdir(scriptsDir, { recursive: true });
    await Deno.writeTextFile(
      `${dataDir}/orbit.csv`,
      "bpm,x_mm,y_mm\nBPM01,0.10,-0.05\nBPM02,-0.20,0.02\nBPM03,0.30,0.01\nBPM04,-0.10,-0.03\n",
    );
    await Deno.writeTextFile(`${outsideDir}/audit.log`, "SECRET-AUDIT-LINE\n");
  } catch (e) {
    await removeTree(root);
    throw e;
  }
  const sandbox = new PyodideSandbox({
    pyodideDir: defaultPyodideDir(),
    dataDirs: [dataDir],
    scriptsDir,
    ...(extra.packagesDir ? { packagesDir: extra.packagesDir } : {}),
    ...(extra.optimize ? { optimize: extra.optimize } : {}),
    ...(extra.spareProcesses !== undefined ? { spareProcesses: extra.spareProcesses } : {}),
    ...(extra.timers ? { timers: extra.timers } : {}),
    reportTimeoutMs: extra.reportTimeoutMs ?? 60_000,
    workRoot,
    snapshotPath: SNAPSHOT_PATH,
    limits: { ...TEST_LIMITS, ...limits },
  });
  return {
    sandbox,
    root,
    dataDir,
    scriptsDir,
    workRoot,
    outsideDir,
    async [Symbol.asyncDispose]() {
      await sandbox.close();
      await removeTree(root);
    },
  };
}

/**
 * A sandbox shared by every test of the file that starts it (at module
 * level): closed, and its directories removed, when the file's tests have run.
 */
export async function startFileSandbox(
  ...args: Parameters<typeof startTestSandbox>
): Promise<TestSandbox> {
  const env = await startTestSandbox(...args);
  // close() kills the waiting process at once; only waiting for its exit is asynchronous.
  removeAtUnload(env.root, () => void env.sandbox.close());
  return env;
}

/** The command line the kernel has for a process (empty once it is gone). */
export function cmdline(pid: number): string[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** Pids of the sandbox processes alive whose command line names `workRoot` (their run directories). */
export function sandboxPids(workRoot: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const args = cmdline(Number(e.name));
    const isSandbox = args.some((a) => a.endsWith("/process_main.ts"));
    if (isSandbox && args.some((a) => a.includes(`${workRoot}/run-`))) pids.push(Number(e.name));
  }
  return pids;
}

/**
 * Whether the process `pid` is gone, polling until it is (a killed process
 * takes a moment to be reaped, longer on a busy machine; a minute is ample).
 */
export async function gone(pid: number): Promise<boolean> {
  const deadline = performance.now() + 60_000;
  while (cpuTicks(pid) !== undefined) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** CPU time (user + system, in clock ticks) a process has used; undefined once it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/**
 * A test of a test file's shared sandbox: its prewarmed process outlives any
 * one test, so Deno's op and resource sanitizers are off.
 */
export function sandboxTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false, fn });
}

/** Runs `code`; `all` joins stdout, stderr and the error, for matching whatever said it. */
export async function runCode(sandbox: PyodideSandbox, code: string) {
  const r = await sandbox.run({ code });
  return { ...r, all: `${r.stdout}\n${r.stderr}\n${r.error ?? ""}` };
}
