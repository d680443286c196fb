/**
 * Real apps (`createApp`) for tests of slash commands and sessions: one
 * state directory, config file and HOME shared by the apps a test opens,
 * all removed on dispose, after every app still open is closed.
 *
 * @module
 */
import type { RunInfo } from "../../src/agent/subagents/manager.ts";
import { type App, createApp } from "../../src/app/app.ts";
import { captureIo } from "./capture_io.ts";
import { tempConfig } from "./run_agent.ts";
import { tempDir } from "./temp.ts";

export interface TestApps extends AsyncDisposable {
  io: ReturnType<typeof captureIo>;
  /** The `[state] dir` the config names (sessions, audit, plans). */
  stateDir: string;
  /** Opens an app on the config; it is closed on dispose unless closed with {@link close}. */
  open(opts?: { resume?: string; profile?: string }): Promise<App>;
  close(app: App): Promise<void>;
}

/** `config(stateDir)` is the TOML; with `llmUrl` the apps talk to that model server. */
export async function testApps(
  config: (stateDir: string) => string,
  llmUrl?: string,
): Promise<TestApps> {
  const state = await tempDir();
  const file = await tempConfig(config(state.path));
  const home = await tempDir();
  const io = captureIo({
    OPENAI_BASE_URL: llmUrl ?? "http://127.0.0.1:9/v1",
    ...(llmUrl ? { OPENAI_API_KEY: "k" } : {}),
    HOME: home.path,
  });
  const open = new Set<App>();
  return {
    io,
    stateDir: state.path,
    async open(opts = {}) {
      const app = await createApp({ config: file.path, ...opts }, io);
      open.add(app);
      return app;
    },
    async close(app) {
      if (open.delete(app)) await app.close();
    },
    async [Symbol.asyncDispose]() {
      for (const app of open) await app.close();
      open.clear();
      for (const dir of [home, file, state]) await dir[Symbol.asyncDispose]();
    },
  };
}

/** Runs one turn to its end; an error event fails the test. */
export async function ask(app: App, input: string): Promise<void> {
  for await (const ev of app.turn(input, new AbortController().signal)) {
    if (ev.type === "error") throw new Error(ev.message);
  }
}

/** A finished sub-agent run as a session file holds it: `agent-1`, device_search, 600 tokens on `main`. */
export function savedRun(over: Partial<RunInfo> = {}): RunInfo {
  return {
    id: "agent-1",
    agent: "device_search",
    parentId: "operator",
    level: 2,
    task: "t",
    background: false,
    status: "done",
    model: "main",
    tools: [],
    turns: 1,
    tokens: 600,
    usage: { promptTokens: 500, completionTokens: 100, totalTokens: 600 },
    startedAt: 0,
    endedAt: 1,
    ...over,
  };
}
