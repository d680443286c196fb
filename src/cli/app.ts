/**
 * Wires configuration, control system, tools and model together for every
 * command. Nothing here prints.
 *
 * @module
 */
import { openControlSystem, openLazily } from "../adapters/mod.ts";
import type { ControlSystem } from "../adapters/adapter.ts";
import { buildSystemPrompt, type ContextFile } from "../agent/context.ts";
import type { AgentEvent } from "../agent/events.ts";
import { runTurn } from "../agent/loop.ts";
import { Session } from "../agent/session.ts";
import {
  loadConfig,
  type LoadedConfig,
  missingModelSetup,
  type ResolvedModel,
  resolveModel,
} from "../config/mod.ts";
import type { ModelClient } from "../llm/types.ts";
import { createRegistry, type ToolRegistry } from "../tools/mod.ts";
import { createSandboxDeps, type SandboxDeps } from "../sandbox/mod.ts";
import { CliError, Exit } from "./exit.ts";
import type { Io } from "./io.ts";
import { createPlanPath, type PlanPath, resolvePath } from "./plan_wiring.ts";
import { BASE_PROMPT } from "./prompt_base.ts";

export interface App {
  loaded: LoadedConfig;
  cs: ControlSystem;
  tools: ToolRegistry;
  /** The change path; set `plans.approver` for the mode (terminal, hash, none). */
  plans: PlanPath;
  /** Absolute state directory (history, audit, plans, work). */
  stateDir: string;
  session: Session;
  /** The Python sandbox (the REPL and ask prewarm it). */
  sandbox: SandboxDeps;
  /** The model in use; see {@link App.switchModel}. */
  modelInfo: ResolvedModel;
  /** Creates (once) the client for the current model; throws CliError when unconfigured. */
  model(): Promise<ModelClient>;
  /** Throws CliError saying what to set when the current model cannot be called. */
  checkModel(): void;
  switchModel(name: string): ResolvedModel;
  systemPrompt(): Promise<string>;
  /** Runs one turn of the session with the current model, tools and system prompt. */
  turn(input: string, signal: AbortSignal): AsyncGenerator<AgentEvent, void, undefined>;
  /** Files that make up the context, for /context. */
  contextFiles(): Promise<ContextFile[]>;
  close(): Promise<void>;
}

export async function createApp(
  opts: { config?: string; model?: string },
  io: Io,
): Promise<App> {
  const loaded = await loadConfig({ path: opts.config, env: { get: io.env }, cwd: io.cwd });
  const { config } = loaded;
  let modelInfo = resolveModel(config, opts.model ?? config.llm.default);
  let client: ModelClient | undefined;
  const cs = openLazily(config.facility.adapter, () => openControlSystem(config));
  const stateDir = resolvePath(config.state.dir, loaded.baseDir, io);
  const plans = await createPlanPath(loaded, cs, stateDir, io);
  let sandbox: SandboxDeps;
  try {
    // Scan data from plans is one more read-only data directory for Python, after the configured ones.
    await Deno.mkdir(plans.scansDir, { recursive: true });
    const dataDirs = [...config.sandbox.data_dirs, plans.scansDir];
    sandbox = createSandboxDeps(
      { ...config.sandbox, data_dirs: dataDirs },
      loaded.baseDir,
      io.env("HOME") ?? io.cwd,
    );
    const mount = dataDirs.length === 1 ? "/data" : `/data${dataDirs.length - 1}`;
    plans.sandboxPath = (host) =>
      host.startsWith(`${plans.scansDir}/`)
        ? `${mount}${host.slice(plans.scansDir.length)}`
        : undefined;
  } catch (e) {
    throw new CliError((e as Error).message, Exit.USAGE);
  }
  const tools = createRegistry({ cs, now: () => Date.now(), plans, sandbox }, {
    maxOutputChars: config.agent.tool_output_max_chars,
    timeoutMs: config.agent.tool_timeout_s * 1000,
  });
  const session = new Session(crypto.randomUUID(), Date.now());
  const resolve = (p: string) => resolvePath(p, loaded.baseDir, io);

  async function contextFiles(): Promise<ContextFile[]> {
    const files: ContextFile[] = [];
    for (const dir of config.agent.context_dirs) {
      const abs = resolve(dir);
      let names: string[] = [];
      try {
        for await (const e of Deno.readDir(abs)) {
          if (e.isFile && e.name.endsWith(".md")) names.push(e.name);
        }
      } catch (e) {
        throw new CliError(
          `context dir ${dir}: cannot read it (${(e as Error).message}); fix [agent] context_dirs`,
          Exit.USAGE,
        );
      }
      names = names.sort();
      for (const n of names) {
        files.push({ path: `${dir}/${n}`, text: await Deno.readTextFile(`${abs}/${n}`) });
      }
    }
    return files;
  }

  function checkModel(): void {
    const missing = missingModelSetup(modelInfo, { get: io.env });
    if (missing) throw new CliError(missing, Exit.USAGE);
  }

  async function agentMd(): Promise<ContextFile | undefined> {
    if (!config.agent.agent_md) return undefined;
    try {
      return {
        path: config.agent.agent_md,
        text: await Deno.readTextFile(resolve(config.agent.agent_md)),
      };
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  }

  const app: App = {
    loaded,
    cs,
    tools,
    plans,
    stateDir,
    session,
    sandbox,
    get modelInfo() {
      return modelInfo;
    },
    checkModel,
    async model() {
      if (client) return client;
      checkModel();
      const { createOpenAiClient } = await import("../llm/openai_client.ts");
      client = createOpenAiClient({
        name: modelInfo.name,
        model: modelInfo.model,
        baseUrl: modelInfo.baseUrl,
        apiKey: io.env(modelInfo.apiKeyEnv) ?? "",
        stream: modelInfo.stream,
        contextWindow: modelInfo.contextWindow,
        temperature: config.llm.temperature,
        retry: {
          maxRetries: config.llm.max_retries,
          baseMs: config.llm.retry_base_ms,
          maxMs: config.llm.retry_max_ms,
        },
        requestTimeoutMs: config.llm.request_timeout_s * 1000,
        idleTimeoutMs: config.llm.idle_timeout_s * 1000,
      });
      return client;
    },
    switchModel(name: string) {
      modelInfo = resolveModel(config, name);
      client = undefined;
      return modelInfo;
    },
    async systemPrompt() {
      return buildSystemPrompt({
        base: BASE_PROMPT,
        agentMd: await agentMd(),
        files: await contextFiles(),
        nowIso: new Date().toISOString(),
      });
    },
    contextFiles,
    async *turn(input: string, signal: AbortSignal) {
      yield* runTurn({
        session,
        input,
        model: await app.model(),
        tools,
        systemPrompt: await app.systemPrompt(),
        maxIterations: config.agent.max_iterations,
        signal,
      });
    },
    close: () => Promise.all([cs.close(), sandbox.runner.close()]).then(() => {}),
  };
  return app;
}
