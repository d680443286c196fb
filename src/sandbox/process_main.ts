/**
 * The sandbox process: started by the agent (as `deno run` with narrow flags,
 * or as the compiled executable in its sandbox role), it holds one
 * interpreter in a worker with narrower permissions still and runs one piece
 * of code, read as JSON lines on stdin, answering with nonce-prefixed JSON
 * lines on stdout. It enforces the time limit with Pyodide's interrupt
 * buffer; the agent kills the whole process when that is not enough, and
 * after every run.
 *
 * @module
 */
import {
  HEARTBEAT_MS,
  type RunMessage,
  type RunReply,
  type SandboxReply,
  type SetupMessage,
} from "./protocol.ts";
import { dropPersistentStorage, persistentStorageLeft } from "./storage.ts";
import { dropAgentGrants } from "./role_grants.ts";
import { writeWorkTree } from "./work_out.ts";

/** How often a still-running script is interrupted again after its limit. */
const REINTERRUPT_MS = 50;

/** Persistent storage APIs still present in this process (for tests). */
export function globalsLeft(): string[] {
  dropPersistentStorage();
  return persistentStorageLeft();
}

/** Runs the sandbox process until stdin closes. */
export async function sandboxProcess(): Promise<void> {
  // In the compiled executable the process has the agent's grants; drop what
  // the sandbox never needs before any Python exists. Reads and writes are
  // narrowed by the worker's permissions below.
  for (const name of ["net", "env", "run", "ffi", "sys"] as const) {
    await Deno.permissions.revoke({ name });
  }
  // The Cache API and localStorage write below DENO_DIR, outside every grant.
  dropPersistentStorage();
  const lines = readLines(Deno.stdin.readable);
  const first = await lines.next();
  if (first.done) Deno.exit(0);
  const { setup, nonce } = JSON.parse(first.value) as SetupMessage;
  // Compiled: the agent's reads and writes beyond this process's own go too.
  if (setup.agentGrants) await dropAgentGrants(setup.agentGrants, setup);
  const encoder = new TextEncoder();
  const send = (m: SandboxReply) => writeAll(encoder.encode(`${nonce} ${JSON.stringify(m)}\n`));
  const interrupt = new Int32Array(new SharedArrayBuffer(4));
  // Replies come only through this port, made before any Python runs and
  // never put where Python can reach it: `postMessage` from Python goes to
  // the worker's global channel, which nothing here listens to.
  const channel = new MessageChannel();
  const worker = startWorker(setup);
  worker.onerror = (e) => {
    e.preventDefault();
    send({ type: "fatal", message: e.message });
    Deno.exit(1);
  };
  let ran = false;
  channel.port1.onmessage = (e: MessageEvent<SandboxReply & { snapshot?: Uint8Array }>) => {
    const msg = e.data;
    if (msg.type === "ready") {
      if (msg.snapshot && setup.snapshotPath && !ran) {
        saveSnapshot(setup.snapshotPath, msg.snapshot);
      }
      send({ type: "ready", ms: msg.ms, fromSnapshot: msg.fromSnapshot, packages: msg.packages });
      // Deno sets up its timers on the first one made (5–15 ms): paid now,
      // while the process waits for its run, not when the run arrives
      // (the memory watch makes its interval before handing the run over).
      clearTimeout(setTimeout(() => {}, 0));
    } else if (msg.type === "result") {
      send({ type: "copying" });
      copiedOut(setup, msg as RunReply & { tree?: unknown }).then(send);
    } else send(msg);
    if (msg.type === "fatal") Deno.exit(1);
  };
  worker.postMessage({ type: "init", setup, interrupt: interrupt.buffer, port: channel.port2 }, [
    channel.port2,
  ]);

  for await (const line of lines) {
    const msg = JSON.parse(line) as RunMessage;
    if (msg.type !== "run" || ran) continue; // one run per process
    ran = true;
    watchMemory(setup.rssLimitMb, send);
    Atomics.store(interrupt, 0, 0);
    channel.port1.postMessage(msg);
    // SIGINT (2) at the limit, and again until the script gives up: code
    // that catches KeyboardInterrupt only delays the agent's hard kill.
    setTimeout(() => {
      Atomics.store(interrupt, 0, 2);
      setInterval(() => Atomics.store(interrupt, 0, 2), REINTERRUPT_MS);
    }, msg.timeoutMs);
  }
  Deno.exit(0);
}

/**
 * The memory cap, kept from this thread (Python runs in the worker and
 * cannot reach it): the whole process's resident size, read without any
 * permission, every {@link HEARTBEAT_MS}. Past the limit, or when it cannot
 * be read, the process reports it and exits; the agent kills a process
 * whose reports stop.
 */
function watchMemory(limitMb: number, send: (m: SandboxReply) => void): void {
  const check = () => {
    let rssMb: number;
    try {
      rssMb = Deno.memoryUsage().rss / 1024 / 1024;
    } catch (e) {
      // Not util/errors.ts: this process may read only src/sandbox/.
      send({ type: "memory", rssMb: -1, error: e instanceof Error ? e.message : String(e) });
      Deno.exit(1);
    }
    if (rssMb > limitMb) {
      send({ type: "memory", rssMb, over: true });
      Deno.exit(1);
    }
    send({ type: "memory", rssMb });
  };
  check();
  setInterval(check, HEARTBEAT_MS);
}

/** The result without its files, which go to the run directory (or nowhere: `disk` says why). */
async function copiedOut(
  setup: SetupMessage["setup"],
  msg: RunReply & { tree?: unknown },
): Promise<RunReply> {
  const { tree, ...reply } = msg;
  const disk = await writeWorkTree(setup.workDir, tree, setup.quotaBytes);
  return { ...reply, ...(disk ? { disk } : {}) };
}

function startWorker(setup: SetupMessage["setup"]): Worker {
  return new Worker(new URL("./worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: workerPermissions(setup) },
  });
}

/**
 * The interpreter worker's grants: read the assets and the mounted
 * directories; write nothing (its /work is in memory, copied out by the process).
 */
export function workerPermissions(setup: SetupMessage["setup"]): Deno.PermissionOptionsObject {
  const read = [
    setup.pyodideDir,
    ...setup.dataDirs,
    ...[setup.scriptsDir, setup.packagesDir, setup.snapshotPath].filter((p): p is string => !!p),
  ];
  return {
    read,
    write: false,
    net: false,
    env: false,
    run: false,
    ffi: false,
    sys: false,
    import: false,
  };
}

/** A pipe may take less than a whole line at once. */
function writeAll(bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
}

/** Written beside its final name and renamed, so a reader never sees half a file. */
function saveSnapshot(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.${Deno.pid}.tmp`;
  try {
    Deno.writeFileSync(tmp, bytes, { mode: 0o600 }); // private, as everything the program writes
    Deno.renameSync(tmp, path);
  } catch {
    // No snapshot this time: the next start is slower, nothing else; a part-written one
    // (a full disk) is not left to fill it further.
    try {
      Deno.removeSync(tmp);
    } catch { /* never written */ }
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) yield line;
    }
  }
}

if (import.meta.main) await sandboxProcess();
