/**
 * Runs facility hook programs (see `src/agent/hooks.ts`): no shell, the
 * JSON object on stdin, stderr kept (the first 64 KiB), stdout ignored;
 * killed when it passes its timeout or the turn is cancelled.
 *
 * @module
 */
import type { HookRun, HookRunner, HookSpec } from "../agent/hooks.ts";
import { resolveConfigPath } from "../config/paths.ts";

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

/** Spawns hook programs with `Deno.Command`; needs `--allow-run` for each. */
export const processHookRunner: HookRunner = async (command, stdin, timeoutMs, signal) => {
  const [program, ...args] = command;
  if (!program) return { status: "failed", message: "the hook's command is empty" };
  const timeout = AbortSignal.timeout(timeoutMs);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.any([signal, timeout]),
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
  const [status, stderr] = await Promise.all([child.status, readCapped(child.stderr)]);
  await feeding;
  if (timeout.aborted) return { status: "timeout" };
  if (signal.aborted) return { status: "failed", message: "the turn was cancelled" };
  return { status: "exited", code: status.code, stderr } satisfies HookRun;
};

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
