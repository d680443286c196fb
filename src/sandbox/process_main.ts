/**
 * The sandbox process: started by the agent (as `deno run` with narrow flags,
 * or as the compiled executable in its sandbox role), it holds one
 * interpreter in a worker with narrower permissions still, and answers run
 * requests read as JSON lines on stdin with JSON lines on stdout. It enforces
 * the time limit with Pyodide's interrupt buffer; the agent kills the whole
 * process when that is not enough.
 *
 * @module
 */
import type { RunMessage, SandboxReply, SandboxSetup } from "./protocol.ts";

/** The first line on stdin. */
interface SetupMessage {
  type: "setup";
  setup: SandboxSetup;
}

/** How often a still-running script is interrupted again after its limit. */
const REINTERRUPT_MS = 50;

/** Runs the sandbox process until stdin closes. */
export async function sandboxProcess(): Promise<void> {
  // In the compiled executable the process has the agent's grants; drop what
  // the sandbox never needs before any Python exists. Reads and writes are
  // narrowed by the worker's permissions below.
  for (const name of ["net", "env", "run", "ffi", "sys"] as const) {
    await Deno.permissions.revoke({ name });
  }
  const encoder = new TextEncoder();
  const send = (m: SandboxReply) => Deno.stdout.writeSync(encoder.encode(`${JSON.stringify(m)}\n`));
  const interrupt = new Int32Array(new SharedArrayBuffer(4));
  let worker: Worker | undefined;
  let timers: ReturnType<typeof setTimeout>[] = [];
  let setup: SandboxSetup | undefined;
  let ran = false;

  const onWorker = (e: MessageEvent<SandboxReply & { snapshot?: Uint8Array }>) => {
    const msg = e.data;
    if (msg.type === "result") {
      timers.forEach(clearTimeout);
      timers = [];
    }
    // Only the first message can carry the snapshot: later ones may come from
    // the code being run (Python can call postMessage) and must not persist.
    if (msg.type === "ready" && msg.snapshot && setup?.snapshotPath && !ran) {
      saveSnapshot(setup.snapshotPath, msg.snapshot);
    }
    if (msg.type === "ready") {
      send({ type: "ready", ms: msg.ms, fromSnapshot: msg.fromSnapshot, packages: msg.packages });
    } else send(msg);
    if (msg.type === "fatal") Deno.exit(1);
  };

  for await (const line of readLines(Deno.stdin.readable)) {
    const msg = JSON.parse(line) as SetupMessage | RunMessage;
    if (msg.type === "setup") {
      setup = msg.setup;
      worker = startWorker(setup);
      worker.onmessage = onWorker;
      worker.onerror = (e) => {
        e.preventDefault();
        send({ type: "fatal", message: e.message });
        Deno.exit(1);
      };
      worker.postMessage({ type: "init", setup, interrupt: interrupt.buffer });
    } else if (msg.type === "run" && worker) {
      ran = true;
      Atomics.store(interrupt, 0, 0);
      worker.postMessage(msg);
      // SIGINT (2) at the limit, and again until the script gives up: code
      // that catches KeyboardInterrupt only delays the agent's hard kill.
      timers.push(setTimeout(() => {
        Atomics.store(interrupt, 0, 2);
        timers.push(setInterval(() => Atomics.store(interrupt, 0, 2), REINTERRUPT_MS));
      }, msg.timeoutMs));
    }
  }
  Deno.exit(0);
}

function startWorker(setup: SandboxSetup): Worker {
  const read = [
    setup.pyodideDir,
    ...setup.dataDirs,
    setup.workRoot,
    ...[setup.scriptsDir, setup.packagesDir, setup.snapshotPath].filter((p): p is string => !!p),
  ];
  return new Worker(new URL("./worker.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        read,
        write: [setup.workRoot],
        net: false,
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
}

/** Written beside its final name and renamed, so a reader never sees half a file. */
function saveSnapshot(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.${Deno.pid}.tmp`;
  try {
    Deno.writeFileSync(tmp, bytes);
    Deno.renameSync(tmp, path);
  } catch {
    // No snapshot this time: the next start is slower, nothing else.
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
