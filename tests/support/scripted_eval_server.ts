/**
 * The replay endpoint for `accel-agent eval --replay URL`: answers each
 * attempt at `URL/<task>/<attempt>/v1` from the task file's scripted
 * transcript (the solving one, or the wrong ones in turn), each attempt
 * served by its own scripted server (real HTTP + SSE). A transcript played
 * to its end starts again for the next request, so one server serves any
 * number of `eval --replay` runs. Test support, kept out of the program:
 *
 * ```sh
 * deno run -A tests/support/scripted_eval_server.ts solving|wrong [--tasks-dir DIR]… [--port N]
 * ```
 *
 * prints the URL, then serves until SIGINT or SIGTERM.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DEFAULT_TASKS_URL, loadTasks, type Task } from "../../src/eval/task.ts";
import { parseScenario } from "./scripted_llm_scenario.ts";
import { type ScriptedLlm, startScriptedLlm } from "./scripted_llm_server.ts";

/** Which transcripts are replayed. */
export type ReplayVariant = "solving" | "wrong";

/** A running replay endpoint. */
export interface ScriptedEval extends AsyncDisposable {
  /** What `--replay` takes. */
  readonly url: string;
  /** Expectation failures and protocol surprises of every attempt's server. */
  failures(): string[];
  close(): Promise<void>;
}

/** Starts the replay endpoint for `tasks` on 127.0.0.1. */
export function startScriptedEval(
  tasks: Task[],
  variant: ReplayVariant,
  port = 0,
): Promise<ScriptedEval> {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const servers = new Map<string, Promise<ScriptedLlm>>();
  const started: ScriptedLlm[] = [];
  const all: Promise<ScriptedLlm>[] = [];
  const serverFor = async (taskId: string, attempt: number) => {
    const key = `${taskId}/${attempt}`;
    let s = servers.get(key);
    // A transcript played to its end serves the next run of the same attempt from its start.
    if (s && (await s).remaining() === 0) s = undefined;
    if (!s) {
      const task = byId.get(taskId);
      const scripted = task?.scripted;
      if (!scripted) throw new RangeError(`no scripted transcript for task "${taskId}"`);
      const json = variant === "solving"
        ? scripted.solving
        : scripted.wrong[(attempt - 1) % scripted.wrong.length];
      s = startScriptedLlm({ scenario: parseScenario(json, `${taskId}:${variant}`) });
      s.then((llm) => started.push(llm), () => {});
      servers.set(key, s);
      all.push(s);
    }
    return await s;
  };
  const ready = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port,
    onListen: () => ready.resolve(),
  }, async (req) => {
    const url = new URL(req.url);
    const m = url.pathname.match(/^\/([a-z0-9-]+)\/(\d+)(\/v1\/.*)$/);
    if (!m) return new Response("expected /<task>/<attempt>/v1/…", { status: 404 });
    let inner: ScriptedLlm;
    try {
      inner = await serverFor(m[1] as string, Number(m[2]));
    } catch (e) {
      return new Response((e as Error).message, { status: 404 });
    }
    const upstream = await fetch(`${inner.url.replace(/\/v1$/, "")}${m[3]}`, {
      method: req.method,
      headers: req.headers,
      body: req.method === "GET" ? undefined : await req.arrayBuffer(),
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  });
  let closed: Promise<void> | undefined;
  const close = () =>
    closed ??= (async () => {
      await server.shutdown();
      await Promise.all(all.map(async (s) => (await s).close()));
    })();
  return ready.promise.then(() => ({
    url: `http://127.0.0.1:${server.addr.port}`,
    failures: () => started.flatMap((s) => s.failures),
    close,
    [Symbol.asyncDispose]: close,
  }));
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { "tasks-dir": { type: "string", multiple: true }, port: { type: "string" } },
    allowPositionals: true,
  });
  const variant = positionals[0];
  if (variant !== "solving" && variant !== "wrong") {
    console.error("usage: scripted_eval_server.ts solving|wrong [--tasks-dir DIR]… [--port N]");
    Deno.exit(2);
  }
  const dirs = [decodeURIComponent(DEFAULT_TASKS_URL.pathname), ...(values["tasks-dir"] ?? [])];
  const replay = await startScriptedEval(await loadTasks(dirs), variant, Number(values.port ?? 0));
  console.log(replay.url);
  const stop = () => replay.close().then(() => Deno.exit(0));
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
