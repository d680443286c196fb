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
  type RunMessage,
  type RunReply,
  type SandboxReply,
  type SetupMessage,
  WATCH_READY,
  WATCH_STOP,
  type WatchInit,
  type WatchRun,
} from "./protocol.ts";
import { dropPersistentStorage, persistentStorageLeft } from "./storage.ts";
import { dropAgentGrants } from "./role_grants.ts";
import { newLineLock, replyWriter } from "./reply_line.ts";
import { writeWorkTree } from "./work_out.ts";

/** Messages taken from the interpreter's port: ready, then a result or a fatal error. */
const PORT_MESSAGES = 3;

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
  // The main thread and the watch both write protocol lines, one whole line at a time.
  const lock = newLineLock();
  const send = replyWriter(nonce, lock);
  const interrupt = new Int32Array(new SharedArrayBuffer(4));
  // The memory watch and the time limit run on a thread of their own, which
  // nothing of the interpreter's can reach or keep busy.
  const watch = startWatch(setup, nonce, lock, interrupt.buffer as SharedArrayBuffer);
  // The process is ready once its watch is too: a run's first report must not wait for it.
  let watchReady!: () => void;
  const watching = new Promise<void>((resolve) => watchReady = resolve);
  watch.onmessage = (e) => {
    if (e.data === WATCH_READY) watchReady();
    if (e.data === WATCH_STOP) Deno.exit(1);
  };
  // Replies come only through this port, made before any Python runs and
  // never put where Python can reach it. The worker's global channel cannot
  // be posted to at all (the worker locks `postMessage` before Python
  // exists), so nothing the interpreter sends can keep this thread busy.
  const channel = new MessageChannel();
  const worker = startWorker(setup);
  worker.onerror = (e) => {
    e.preventDefault();
    send({ type: "fatal", message: e.message });
    Deno.exit(1);
  };
  let ran = false;
  let taken = 0;
  channel.port1.onmessage = (e: MessageEvent<SandboxReply & { snapshot?: Uint8Array }>) => {
    // Ready, then one result or one fatal error: anything beyond is not ours.
    if (++taken >= PORT_MESSAGES) channel.port1.close();
    const msg = e.data;
    if (msg?.type === "ready") {
      if (msg.snapshot && setup.snapshotPath && !ran) {
        saveSnapshot(setup.snapshotPath, msg.snapshot);
      }
      const ready = { ms: msg.ms, fromSnapshot: msg.fromSnapshot, packages: msg.packages };
      watching.then(() => send({ type: "ready", ...ready }));
    } else if (msg?.type === "result") {
      channel.port1.close();
      send({ type: "copying" });
      send(copiedOut(setup, msg as RunReply & { tree?: unknown }));
    } else if (msg?.type === "fatal") {
      send({ type: "fatal", message: String(msg.message).slice(0, 500) });
      Deno.exit(1);
    }
  };
  worker.postMessage({ type: "init", setup, interrupt: interrupt.buffer, port: channel.port2 }, [
    channel.port2,
  ]);

  for await (const line of lines) {
    const msg = JSON.parse(line) as RunMessage;
    if (msg.type !== "run" || ran) continue; // one run per process
    ran = true;
    Atomics.store(interrupt, 0, 0);
    watch.postMessage({ type: "run", timeoutMs: msg.timeoutMs } satisfies WatchRun);
    channel.port1.postMessage(msg);
  }
  Deno.exit(0);
}

/** The result without its files, which go to the run directory (or nowhere: `disk` says why). */
function copiedOut(setup: SetupMessage["setup"], msg: RunReply & { tree?: unknown }): RunReply {
  const { tree, ...reply } = msg;
  const failed = writeWorkTree(setup.workDir, tree, setup.quotaBytes);
  return {
    ...reply,
    ...(failed ? { disk: failed.error, ...(failed.overQuota ? { diskOverQuota: true } : {}) } : {}),
  };
}

/**
 * Starts the process's watch (`memory_watch.ts`) with what it needs: the
 * nonce and the lock of the protocol's stdout, the limit, the interrupt
 * buffer, and its work directory to hold open (its reserved descriptor),
 * which is all it may read.
 */
export function startWatch(
  setup: Pick<SetupMessage["setup"], "workDir" | "rssLimitMb">,
  nonce: string,
  lock: SharedArrayBuffer,
  interrupt: SharedArrayBuffer,
): Worker {
  const watch = new Worker(new URL("./memory_watch.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        read: [setup.workDir],
        write: false,
        net: false,
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
  const init: WatchInit = {
    type: "init",
    nonce,
    lock,
    limitMb: setup.rssLimitMb,
    reservePath: setup.workDir,
    interrupt,
  };
  watch.postMessage(init);
  return watch;
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
