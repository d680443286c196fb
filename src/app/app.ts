/**
 * Wires configuration, control system, tools and model together for every
 * command. Nothing here prints.
 *
 * @module
 */
import {
  bytesText,
  MAX_DEFINITION_BYTES,
  NotRegularFileError,
  readRegularText,
  TooLargeError,
} from "../util/bounded_read.ts";
import { indexSourceFor, openControlSystem, openLazily } from "../adapters/mod.ts";
import type { DeviceIndexService, IndexServiceOptions } from "../index/service.ts";
import { type ControlSystem, readOnlyView } from "../adapters/adapter.ts";
import { buildSystemPrompt, type ContextFile } from "../agent/context.ts";
import { runTurn } from "../agent/loop.ts";
import { compactSession } from "../agent/compaction.ts";
import { Session } from "../agent/session.ts";
import { loadConfig, type LoadedConfig, missingModelSetup, resolveModel } from "../config/mod.ts";
import type { ModelClient } from "../llm/types.ts";
import { ToolRegistry } from "../tools/mod.ts";
import { killRunningHooks, processHookRunner, resolveHook } from "../tools/hooks.ts";
import { sessionResultWriter } from "../tools/tool_results.ts";
import { commandHooks, type HookSpec } from "../agent/hooks.ts";
import { createSandboxDeps, isCompiled, type SandboxDeps } from "../sandbox/mod.ts";
import { unreadableConfiguredPath } from "./path_problems.ts";
import { checkProfile, createFeatures, createModelClient, toolCallCaps } from "./features.ts";
import { SessionSaveError } from "./session_store.ts";
import { skillsSection } from "../skills/skill.ts";
import { CliError, Exit } from "./exit.ts";
import type { Io } from "./io.ts";
import { createPlanPath, operatorName, resolvePath } from "./plan_wiring.ts";
import { BASE_PROMPT } from "./prompt_base.ts";
import type { App } from "./types.ts";

export type { App, Resumed, Steering } from "./types.ts";
import { errorMessage } from "../util/errors.ts";
import { homeProblem } from "../config/paths.ts";
import { makePrivateDir } from "../util/private_files.ts";
import { closeStateDir } from "./state_dir.ts";

export async function createApp(
  opts: {
    config?: string;
    model?: string;
    resume?: string;
    profile?: string;
    loaded?: LoadedConfig;
    controlSystem?: ControlSystem;
  },
  io: Io,
): Promise<App> {
  const loaded = opts.loaded ??
    await loadConfig({ path: opts.config, env: { get: io.env }, cwd: io.cwd });
  // Without HOME, `~` would be the current directory: state under /.local/state, unseen.
  const unset = homeProblem(loaded.config, io.env("HOME"));
  if (unset) throw new CliError(`config error: ${unset}`, Exit.USAGE);
  const unusable = unreadableConfiguredPath(loaded, io.env("HOME") ?? io.cwd);
  if (unusable) throw new CliError(`config error: ${unusable}`, Exit.USAGE);
  const { config } = loaded;
  const profile = checkProfile(config, opts.profile);
  let modelInfo = resolveModel(config, opts.model ?? config.llm.default);
  let client: ModelClient | undefined;
  const stateDir = resolvePath(config.state.dir, loaded.baseDir, io);
  await closeStateDir(stateDir);
  const source = await indexSourceFor(config);
  const devices = source && lazyIndexService({
    source,
    synonymsFile: config.index.synonyms_file
      ? resolvePath(config.index.synonyms_file, loaded.baseDir, io)
      : undefined,
    cacheDir: config.index.cache ? `${stateDir}/index` : undefined,
  });
  // One index per process: the backend's own search (the simulator's) uses it too.
  const cs = opts.controlSystem ?? openLazily(config.facility.adapter, async () => {
    // The simulator shows the entries posted to its own logbook in its e-log.
    const posted = config.facility.adapter === "simulator"
      ? (await import("../adapters/logbooks.ts")).simulatorLogbook(stateDir)
      : undefined;
    return openControlSystem(
      config,
      undefined,
      devices && ((signal) => devices.index(signal)),
      posted,
    );
  });
  // The writer goes to the plan service alone; everyone else gets a view that can only read.
  const plans = await createPlanPath(loaded, cs, stateDir, io);
  const reader = readOnlyView(cs);
  let sandbox: SandboxDeps;
  try {
    // Scan data from plans is one more read-only data directory for Python, after the configured ones.
    await makePrivateDir(plans.scansDir);
    const dataDirs = [...config.sandbox.data_dirs, plans.scansDir];
    sandbox = createSandboxDeps(
      { ...config.sandbox, data_dirs: dataDirs },
      loaded.baseDir,
      io.env("HOME") ?? io.cwd,
      // Compiled, the sandbox role starts with these (baked) grants and gives up what it needs not.
      isCompiled()
        ? (await import("./permissions.ts")).computeGrants(loaded, { env: io.env, cwd: io.cwd })
        : undefined,
    );
    const mount = dataDirs.length === 1 ? "/data" : `/data${dataDirs.length - 1}`;
    plans.sandboxPath = (host) =>
      host.startsWith(`${plans.scansDir}/`)
        ? `${mount}${host.slice(plans.scansDir.length)}`
        : undefined;
  } catch (e) {
    throw new CliError(errorMessage(e), Exit.USAGE);
  }
  const registry = {
    maxOutputChars: config.agent.tool_output_max_chars,
    timeoutMs: config.agent.tool_timeout_s * 1000,
  };
  let session = new Session(crypto.randomUUID(), Date.now());
  const resolve = (p: string) => resolvePath(p, loaded.baseDir, io);
  // A file as the prompt names it: beside the config, by its relative path; inherited, by its own.
  const shown = (p: string) =>
    p.startsWith(`${loaded.baseDir}/`) ? p.slice(loaded.baseDir.length + 1) : p;
  const hookCommand = (h: HookSpec) => resolveHook(h, loaded.baseDir, io.env("HOME") ?? io.cwd);
  const hooks = config.hooks.before_tool.length + config.hooks.after_tool.length > 0
    ? commandHooks(
      {
        before_tool: config.hooks.before_tool.map(hookCommand),
        after_tool: config.hooks.after_tool.map(hookCommand),
      },
      processHookRunner(),
      () => operatorName(config.operator, io),
    )
    : undefined;
  // Beside the session's file (the session store's directory is `<state dir>/sessions`).
  const keepFullResult = sessionResultWriter(() => `${stateDir}/sessions/${session.id}`);
  const features = await createFeatures({
    config,
    profile,
    io,
    cs: reader,
    devices,
    plans,
    stateDir,
    registry,
    resolve,
    session: () => session,
    model: () => app.model(),
    operator: () => app.operator,
    sandbox,
    hooks,
    keepFullResult,
  });
  const tools = new ToolRegistry(
    features.tools,
    { cs: reader, now: () => Date.now(), plans, sandbox, devices },
    registry,
  );
  const contextWindow = () => modelInfo.contextWindow ?? config.agent.context_window;

  async function contextFiles(): Promise<ContextFile[]> {
    const files: ContextFile[] = [];
    let total = 0;
    for (const dir of config.agent.context_dirs) {
      const abs = resolve(dir);
      let names: string[] = [];
      try {
        for await (const e of Deno.readDir(abs)) {
          if (e.isFile && e.name.endsWith(".md")) names.push(e.name);
        }
      } catch (e) {
        throw new CliError(
          `context dir ${dir}: cannot read it (${errorMessage(e)}); fix [agent] context_dirs`,
          Exit.USAGE,
        );
      }
      if (names.length > MAX_CONTEXT_FILES) {
        throw new CliError(
          `context dir ${dir}: more than ${MAX_CONTEXT_FILES} Markdown files; fix [agent] context_dirs`,
          Exit.USAGE,
        );
      }
      names = names.sort();
      for (const n of names) {
        const text = await promptFile(`${abs}/${n}`, "context_dirs");
        // Every request of a turn carries them all: past what any model takes, they are a mistake.
        total += text.length;
        if (total > MAX_CONTEXT_BYTES) {
          throw new CliError(
            `context dir ${dir}: its files hold more than ${
              bytesText(MAX_CONTEXT_BYTES)
            } together; fix [agent] context_dirs`,
            Exit.USAGE,
          );
        }
        files.push({ path: shown(`${abs}/${n}`), text });
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
        path: shown(resolve(config.agent.agent_md)),
        text: await promptFile(resolve(config.agent.agent_md), "agent_md"),
      };
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  }

  /** A file for the system prompt: a regular file of at most 1 MiB, or a usage error naming the key. */
  async function promptFile(path: string, key: string): Promise<string> {
    try {
      return await readRegularText(path, 1 << 20);
    } catch (e) {
      if (e instanceof NotRegularFileError || e instanceof TooLargeError) {
        throw new CliError(`${e.message}; fix [agent] ${key}`, Exit.USAGE);
      }
      throw e;
    }
  }

  // A failed save (a full disk) is said once and retried with the next event: the turn goes on.
  let saveFailure: string | undefined;
  const saveSession = async () => {
    try {
      await features.sessions.save(session);
      saveFailure = undefined;
    } catch (e) {
      if (!(e instanceof SessionSaveError)) throw e;
      if (saveFailure === undefined) io.err(`accel-agent: ${e.message}\n`);
      saveFailure = e.message;
    }
  };
  const app: App = {
    loaded,
    cs: reader,
    devices,
    tools,
    plans,
    stateDir,
    get session() {
      return session;
    },
    // The session's own queue: a resumed or cleared session brings its own.
    get steering() {
      return session.steering;
    },
    sandbox,
    agents: features.agents,
    profile,
    skills: features.skills,
    activeSkills: features.activeSkills,
    sessions: features.sessions,
    async resume(id?: string) {
      const saved = await features.sessions.load(id);
      const left = session.id;
      session = saved.session;
      const cancelled = features.agents.replace(
        saved.runs,
        saved.session.id === left ? undefined : `the operator resumed session ${saved.session.id}`,
      );
      // Their end belongs in the file of the session they ran for.
      await Promise.all(cancelled.map((r) => features.sessions.saveRun(left, r)));
      return { ...saved, cancelled };
    },
    contextWindow,
    async compact(signal) {
      const ev = await compactSession(
        session,
        await app.model(),
        await app.systemPrompt(),
        features.compaction(contextWindow()),
        signal,
        true,
      );
      if (ev) session.compactions++;
      return ev;
    },
    get modelInfo() {
      return modelInfo;
    },
    checkModel,
    async model() {
      if (client) return client;
      client = await createModelClient(modelInfo, config, io);
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
      const model = await app.model();
      const skillText = skillsSection(features.activeSkills(input));
      const systemPrompt = await app.systemPrompt();
      for await (
        const ev of runTurn({
          session,
          input,
          model,
          tools,
          systemPrompt: skillText ? `${systemPrompt}\n\n${skillText}` : systemPrompt,
          maxIterations: config.agent.max_iterations,
          signal,
          deadline: { ms: config.llm.turn_timeout_s * 1000, key: "[llm] turn_timeout_s" },
          toolCalls: toolCallCaps(config),
          hooks,
          keepFullResult,
          compact: async (s, prompt, sig) => {
            const ev = await compactSession(
              s,
              model,
              prompt,
              features.compaction(contextWindow()),
              sig,
            );
            if (ev) s.compactions++;
            return ev;
          },
        })
      ) {
        if (ev.type === "turn_complete") session.lastTurnUsage = ev.usage;
        // Saved as it goes: a killed process loses at most the call in flight.
        await saveSession();
        yield ev;
      }
      await saveSession();
    },
    async close() {
      killRunningHooks();
      await features.close();
      await Promise.all([cs.close(), sandbox.runner.close(), plans.close()]);
    },
  };
  if (opts.resume !== undefined) await app.resume(opts.resume || undefined);
  return app;
}

/** Markdown files of one context directory, and characters of all of them together, at most. */
const MAX_CONTEXT_FILES = 256;
const MAX_CONTEXT_BYTES = 4 * MAX_DEFINITION_BYTES;

/** The device index service, its modules loaded on the first search (start-up does not pay). */
function lazyIndexService(options: IndexServiceOptions): DeviceIndexService {
  let service: Promise<DeviceIndexService> | undefined;
  const get = () =>
    service ??= import("../index/service.ts").then((m) => new m.IndexService(options));
  return {
    index: async (signal?: AbortSignal) => (await get()).index(signal),
    refresh: async (signal?: AbortSignal) => (await get()).refresh(signal),
    stats: async (signal?: AbortSignal) => (await get()).stats(signal),
  };
}
