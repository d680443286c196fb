/**
 * The interpreter: Pyodide inside a worker whose Deno permissions are
 * narrower than its process's (read: the assets, data, scripts and packages
 * directories; write: nothing; nothing else). /work is in memory; when the
 * run ends its tree is handed to the process, which checks it and writes it
 * out. This is the boundary Python's `from js import Deno, fetch` runs
 * into; nothing here relies on Python being well behaved.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { loadPyodide, PyodideAPI } from "pyodide";
import { type ProcessSetup, PY_PATHS, type RunMessage, type RunReply } from "./protocol.ts";
import { readWorkTree, treeBuffers, type WorkTree } from "./work_out.ts";
import { OutputCap } from "./output_cap.ts";
import { LocalPackages } from "./packages.ts";
import { PRELUDE, WARM_MODULES, WARM_UP } from "./python_prelude.ts";
import { dropPersistentStorage } from "./storage.ts";

// Before any Python exists: no storage that outlives the process.
dropPersistentStorage();
// …and no channel to the process's main thread but the private port: the
// worker's global one is shut for good (a flood of messages, or one huge
// one, would keep that thread busy deserializing what nobody reads).
Object.defineProperty(globalThis, "postMessage", {
  value: function postMessage(): void {},
  writable: false,
  configurable: false,
  enumerable: true,
});
/**
 * Replies go out through the port the process handed over, kept here at
 * module scope where Python cannot reach it, with `postMessage` (and the
 * `apply` that calls it) taken before Python could replace them.
 */
const postOnPort = MessagePort.prototype.postMessage;
const apply = Reflect.apply;
let port: MessagePort | undefined;
function reply(msg: unknown, transfer: Transferable[] = []): void {
  if (port) apply(postOnPort, port, [msg, transfer]);
}

// Emscripten's NODEFS turns a Node-style error `code` into an errno; Deno's
// NotCapable has none, which Pyodide treats as a fatal error. With a code, a
// refused path is an ordinary PermissionError the script can read.
Object.defineProperty(Deno.errors.NotCapable.prototype, "code", { value: "EACCES" });

type InitMessage = {
  type: "init";
  setup: ProcessSetup;
  interrupt: SharedArrayBuffer;
  port: MessagePort;
};
type SnapshotApi = PyodideAPI & { makeMemorySnapshot(): Uint8Array };
type LoadOptions = Parameters<typeof loadPyodide>[0];

let py: PyodideAPI | undefined;
let started: Promise<void> | undefined;
let interrupt: Int32Array | undefined;
let packages: LocalPackages | undefined;
/** This run's disk quota and what the code has written to /work so far (never decreased). */
let quotaBytes = 0;
let workBytes = 0;
/** Set when a write passed the quota: nothing is copied out. */
let diskFull = false;
let out = new OutputCap(0);
let err = new OutputCap(0);
const outText = new TextDecoder();
const errText = new TextDecoder();
/** Set when Pyodide reported a fatal error: the process must be replaced. */
let fatal: string | undefined;

// The global channel carries only the init message; runs come on the port.
self.onmessage = (e: MessageEvent<InitMessage>) => {
  self.onmessage = null;
  port = e.data.port;
  port.onmessage = (m: MessageEvent<RunMessage>) => void guarded(() => runWhenReady(m.data));
  void guarded(() => started = init(e.data));
};

async function runWhenReady(msg: RunMessage): Promise<void> {
  await started; // a run sent before the interpreter is ready waits for it
  const result = await run(msg);
  reply(result, treeBuffers(result.tree));
}

async function guarded(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    // A fatal Pyodide error leaves the interpreter unusable: say so, and the
    // process is replaced.
    reply({ type: "fatal", message: oneLine(error) });
  }
}

async function init({ setup, interrupt: buffer }: InitMessage): Promise<void> {
  const started = performance.now();
  interrupt = new Int32Array(buffer);
  quotaBytes = setup.quotaBytes;
  const indexURL = `${setup.pyodideDir}/`;
  // Under `deno run`, by its file (not the npm specifier): the process's
  // Deno cache is private and holds no npm packages. A compiled executable
  // has the package embedded (this literal import puts it there).
  const { loadPyodide: load } =
    (import.meta.url.includes("/deno-compile-")
      ? await import("pyodide")
      : await import(new URL("pyodide.mjs", `file://${indexURL}`).href)) as {
        loadPyodide: typeof loadPyodide;
      };
  let snapshot = setup.snapshotPath ? readOptional(setup.snapshotPath) : undefined;
  if (snapshot) {
    try {
      py = await load({ indexURL, _loadSnapshot: snapshot } as LoadOptions);
    } catch {
      snapshot = undefined; // damaged or from another build: start plain and make a new one
    }
  }
  if (!snapshot) {
    py = await load({ indexURL, _makeSnapshot: !!setup.snapshotPath } as LoadOptions);
  }
  if (!py) throw new Error("Pyodide did not start");
  let made: Uint8Array | undefined;
  if (!snapshot) {
    py.runPython(`import ${WARM_MODULES.join(", ")}`);
    if (setup.snapshotPath) made = (py as SnapshotApi).makeMemorySnapshot();
  }
  // Mounted after the snapshot: mounts are host state, not heap state.
  setup.dataDirs.forEach((dir, i) => mount(i === 0 ? PY_PATHS.data : `${PY_PATHS.data}${i}`, dir));
  if (setup.scriptsDir) mount(PY_PATHS.scripts, setup.scriptsDir);
  // /work is in memory (counted by the memory cap); the process copies it out.
  py.FS.mkdirTree(PY_PATHS.work);
  countWorkWrites(py);
  py.setInterruptBuffer(interrupt);
  // Raw writes, not lines: a gigabyte without a newline must stream into the cap.
  py.setStdout({
    write: (b: Uint8Array) => (out.push(outText.decode(b, { stream: true })), b.length),
  });
  py.setStderr({
    write: (b: Uint8Array) => (err.push(errText.decode(b, { stream: true })), b.length),
  });
  packages = setup.packagesDir ? LocalPackages.scan(setup.packagesDir) : LocalPackages.none();
  py.runPython(PRELUDE);
  const dataDirs = setup.dataDirs.map((_, i) => i === 0 ? PY_PATHS.data : `${PY_PATHS.data}${i}`);
  (py.globals.get("_accel_setup") as (a: string) => void)(JSON.stringify({
    data_dirs: dataDirs,
    scripts_dir: setup.scriptsDir ? PY_PATHS.scripts : null,
    work_dir: PY_PATHS.work,
    packages: packages.names(),
  }));
  const runner = py.globals.get("_accel_run") as (code: string, argv: string) => string | null;
  runner(WARM_UP, '["<warm-up>"]');
  reply({
    type: "ready",
    ms: performance.now() - started,
    fromSnapshot: snapshot !== undefined,
    packages: packages.names(),
    snapshot: made,
  }, made ? [made.buffer as ArrayBuffer] : []);
}

async function run(msg: RunMessage): Promise<RunReply & { tree: WorkTree }> {
  if (!py || !interrupt || !packages) throw new Error("the interpreter is not started");
  const started = performance.now();
  out = new OutputCap(msg.maxOutputChars);
  err = new OutputCap(msg.maxOutputChars);
  Atomics.store(interrupt, 0, 0);
  workBytes = 0;
  let error: string | undefined;
  try {
    await packages.loadFor(py, msg.code);
    const runner = py.globals.get("_accel_run") as (code: string, argv: string) => string | null;
    error = runner(msg.code, JSON.stringify(msg.argv)) ?? undefined;
  } catch (e) {
    error = oneLine(e);
    if ((e as { pyodide_fatal_error?: boolean }).pyodide_fatal_error) fatal = error;
  }
  const timedOut = Atomics.load(interrupt, 0) !== 0 || /KeyboardInterrupt/.test(error ?? "");
  if (timedOut) error = `stopped by the time limit of ${msg.timeoutMs / 1000} s`;
  else if (error?.startsWith("ModuleNotFoundError")) error = packages.missingMessage(error);
  const tree: WorkTree = diskFull
    ? {
      error: `the run wrote more than the disk quota of ${quotaBytes / 1024 / 1024} MB`,
      overQuota: true,
    }
    : readWorkTree(py.FS as never, PY_PATHS.work, quotaBytes);
  return {
    tree,
    type: "result",
    id: msg.id,
    ok: error === undefined,
    stdout: out.text(),
    stderr: err.text(),
    ...(error === undefined ? {} : { error }),
    timedOut,
    ...(fatal ? { fatal: true } : {}),
    ms: performance.now() - started,
  };
}

/**
 * Counts what Python writes to /work and fails a write past the quota with
 * ENOSPC, so a runaway writer stops early with an ordinary OSError. Python
 * could undo this (Emscripten's FS is reachable from the js module): the
 * quota itself is enforced by the process when it copies the files out.
 */
function countWorkWrites(api: PyodideAPI): void {
  type Node = { usedBytes?: number; contents?: Uint8Array };
  type Memfs = {
    ops_table?: { file: { stream: Record<string, unknown> } };
    expandFileStorage?: (node: Node, capacity: number) => void;
  };
  type Fs = {
    getPath(node: unknown): string;
    ErrnoError: new (errno: number) => Error;
    filesystems: { MEMFS: Memfs };
  };
  type Stream = { node: Node };
  const fs = api.FS as unknown as Fs;
  const memfs = fs.filesystems.MEMFS;
  // Emscripten grows a large file by 1/8 at a time, copying it each time: a
  // 100 MB file left about a gigabyte of garbage. Doubling leaves at most its size.
  const expand = memfs.expandFileStorage;
  if (expand) {
    memfs.expandFileStorage = (node: Node, capacity: number) => {
      const had = node.contents?.length ?? 0;
      apply(expand, memfs, [node, capacity > had ? Math.max(capacity, 2 * had) : capacity]);
    };
  }
  const table = memfs.ops_table?.file.stream;
  const write = table?.write as ((s: Stream, ...rest: unknown[]) => number) | undefined;
  if (!table || !write) throw new Error("Pyodide's in-memory file system has changed");
  table.write = function (this: unknown, stream: Stream, ...rest: unknown[]): number {
    const before = stream.node.usedBytes ?? 0;
    const written = apply(write, this, [stream, ...rest]);
    const grown = (stream.node.usedBytes ?? 0) - before;
    if (grown > 0 && fs.getPath(stream.node).startsWith(`${PY_PATHS.work}/`)) {
      workBytes += grown;
      if (workBytes > quotaBytes) {
        diskFull = true;
        throw new fs.ErrnoError(ENOSPC);
      }
    }
    return written;
  };
}

/** Emscripten's errno for "No space left on device". */
const ENOSPC = 51;

function mount(at: string, hostDir: string): void {
  py?.FS.mkdirTree(at);
  py?.mountNodeFS(at, hostDir);
}

function readOptional(path: string): Uint8Array | undefined {
  try {
    return Deno.readFileSync(path);
  } catch {
    return undefined;
  }
}

function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const lines = text.trim().split("\n").filter((l) => l.trim());
  return lines.at(-1)?.trim() ?? "unknown error";
}
