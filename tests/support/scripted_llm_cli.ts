/**
 * The scripted server as a process, for tests that drive the real CLI:
 *
 * ```sh
 * deno run --allow-net --allow-read tests/support/scripted_llm.ts SCENARIO.json [--port N] [--timeout SECONDS]
 * ```
 *
 * @module
 */

import { loadScenario } from "./scripted_llm_scenario.ts";
import { startScriptedLlm } from "./scripted_llm_server.ts";

const USAGE = "usage: scripted_llm.ts SCENARIO.json [--port N] [--timeout SECONDS]\n" +
  "Prints the base URL, serves until the scenario is consumed, then exits (1 on failures).";

/** Where the CLI writes; tests may capture it. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

interface CliArgs {
  path: string;
  port: number;
  timeoutSeconds: number;
}

/** Parses arguments, or returns the reason they are wrong. */
export function parseCliArgs(args: readonly string[]): CliArgs | string {
  let path: string | undefined;
  let port = 0;
  let timeoutSeconds = 120;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const [flag, inline] = arg.startsWith("--") ? arg.split("=", 2) : [arg, undefined];
    if (flag === "--port" || flag === "--timeout") {
      const raw = inline ?? args[++i];
      const value = Number(raw);
      if (raw === undefined || raw === "" || !Number.isFinite(value) || value < 0) {
        return `${flag} needs a number, got ${raw ?? "nothing"}`;
      }
      if (flag === "--port") port = value;
      else timeoutSeconds = value;
    } else if (flag?.startsWith("-")) {
      return `unknown option ${arg}`;
    } else if (path === undefined) {
      path = arg;
    } else {
      return `unexpected argument ${arg}`;
    }
  }
  return path === undefined ? "missing SCENARIO.json" : { path, port, timeoutSeconds };
}

/**
 * Runs the server until the scenario is consumed (0), or a signal or the timeout
 * ends it; returns 1 when anything failed, 2 on bad usage. Never exits itself.
 */
export async function runCli(args: readonly string[], io: CliIo = consoleIo): Promise<number> {
  const parsed = parseCliArgs(args);
  if (typeof parsed === "string") {
    io.err(`scripted-llm: ${parsed}\n${USAGE}`);
    return 2;
  }
  let server;
  try {
    const scenario = await loadScenario(parsed.path);
    server = await startScriptedLlm({ scenario, port: parsed.port });
  } catch (error) {
    io.err(`scripted-llm: ${error instanceof Error ? error.message : error}`);
    return 2;
  }
  const ended = Promise.withResolvers<"consumed" | "signal" | "timeout">();
  const onSignal = () => ended.resolve("signal");
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  const timer = setTimeout(() => ended.resolve("timeout"), parsed.timeoutSeconds * 1000);
  server.settled().then(() => ended.resolve("consumed"));
  // Only now, so a harness that signals right after reading the URL is heard.
  io.out(server.url);
  const reason = await ended.promise;
  clearTimeout(timer);
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);

  const left = server.remaining();
  await server.close();
  const failures = [...server.failures];
  if (reason === "timeout") {
    failures.push(`timed out after ${parsed.timeoutSeconds}s with ${left} turn(s) unconsumed`);
  } else if (reason === "signal" && left > 0 && Number.isFinite(left)) {
    failures.push(`stopped by a signal with ${left} turn(s) unconsumed`);
  }
  for (const failure of failures) io.err(`scripted-llm: ${failure}`);
  return failures.length > 0 ? 1 : 0;
}

const consoleIo: CliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};
