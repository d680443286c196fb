/**
 * Runs facility hook programs (see `src/agent/hooks.ts`): no shell, the
 * JSON object on stdin, stderr kept (the first 64 KiB), stdout ignored;
 * killed when it passes its timeout or the turn is cancelled.
 *
 * @module
 */
import type { HookRun, HookRunner, HookSpec } from "../agent/hooks.ts";
import { resolveConfigPath } from "../config/paths.ts";
import { timeoutSignal, type Timers } from "../util/misc.ts";

/**
 * The hook with its program resolved as the grants name it: a path (with a
 * slash) relative to the config file's directory, `~` the home directory; a
 * bare name is left to `PATH`.
 */
export function resolveHook(spec: HookSpec, baseDir: string, home: string): HookSpec {
  const [program, ...args] = spec.command;
  if (program === undefined || !program.includes("/")) return spec;
  return { ...spec, command: [resolveConfigPath(program, baseDir, home), ...args] };
}

/** Bytes of a hook's stderr kept (the veto reason is its first line). */
const STDERR_BYTES = 64 * 1024;

/**
 * A runner that spawns hook programs with `Deno.Command` (it needs
 * `--allow-run` for each); its timeouts run on `timers` (tests pass a manual clock's).
 */
export function processHookRunner(timers?: Timers): HookRunner {
  return (command, stdin, timeoutMs, signal) =>
    runHook(command, stdin, timeoutSignal(timeoutMs, timers), signal);
}

async function runHook(
  command: string[],
  stdin: string,
  timeout: AbortSignal,
  signal: AbortSignal,
): Promise<HookRun> {
  const [program, ...args] = command;
  if (!program) return { status: "failed", message: "the hook's command is empty" };
  const stop = AbortSignal.any([signal, timeout]);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      signal: stop,
    }).spawn();
  } catch (e) {
    return { status: "failed", message: e instanceof Error ? e.message : String(e) };
  }
  const feeding = (async () => {
    const writer = child.stdin.getWriter();
    try {
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
    } catch {
      // A hook that exits without reading its input is still heard by its exit status.
    }
  })();
  const reading = readCapped(child.stderr);
  const status = await child.status;
  // A program it left behind may hold stderr open: the hook's time bounds the read too.
  const stderr = await Promise.race([reading, onAbort(stop, "")]);
  await feeding;
  if (timeout.aborted) return { status: "timeout" };
  if (signal.aborted) return { status: "failed", message: "the turn was cancelled" };
  return { status: "exited", code: status.code, stderr };
}

async function readCapped(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (size < STDERR_BYTES) chunks.push(chunk.subarray(0, STDERR_BYTES - size));
    size += chunk.length;
  }
  const all = new Uint8Array(Math.min(size, STDERR_BYTES));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}

/** Resolves to `value` when `signal` aborts. */
function onAbort<T>(signal: AbortSignal, value: T): Promise<T> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(value);
    signal.addEventListener("abort", () => resolve(value), { once: true });
  });
}
