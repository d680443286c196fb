/**
 * Wires configuration, control system, tools and model together for every
 * command. Nothing here prints.
 *
 * @module
 */
import { openControlSystem } from "../adapters/mod.ts";
import type { ControlSystem } from "../adapters/adapter.ts";
import { buildSystemPrompt, type ContextFile } from "../agent/context.ts";
import type { AgentEvent } from "../agent/events.ts";
import { runTurn } from "../agent/loop.ts";
import { compactSession, DEFAULT_COMPACTION } from "../agent/compaction.ts";
import { Session } from "../agent/session.ts";
import {
  loadConfig,
  type LoadedConfig,
  missingModelSetup,
  type ResolvedModel,
  resolveModel,
} from "../config/mod.ts";
import type { ModelClient } from "../llm/types.ts";
import { ALL_TOOLS, ToolRegistry } from "../tools/mod.ts";
import { agentTools } from "../tools/agent_tools.ts";
import { askUserTool, type OperatorChannel } from "../tools/ask_user.ts";
import type { SubagentManager } from "../agent/subagents/manager.ts";
import {
  BUILTIN_AGENTS_URL,
  createSubagentManager,
  loadAgentDefinitions,
} from "./subagent_wiring.ts";
import { type SavedSession, SessionStore } from "./session_store.ts";
import { BUILTIN_SKILLS_URL, loadSkills } from "./skill_wiring.ts";
import { matchSkills, type Skill, skillsSection } from "../skills/skill.ts";
import {
  AutoApprover,
  type Profile,
  PROFILE_NAMES,
  type ProfileName,
  profileRefusal,
  PROFILES,
} from "../profiles/profile.ts";
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
  /** Sub-agents of this session (spawned by the operator's agent and theirs). */
  agents: SubagentManager;
  /** Who answers `ask_user`: the REPL sets the terminal; undefined means nobody (one-shot). */
  operator?: OperatorChannel;
  /** What the agent may do here (observer, operator, sim-eval). */
  profile: Profile;
  /** Skills that can be triggered by the operator's words. */
  skills: Skill[];
  /** Skills active for this conversation (matched by a question so far, or by `input`). */
  activeSkills(input?: string): Skill[];
  /** Where sessions are saved as they go (`<state dir>/sessions`). */
  sessions: SessionStore;
  /** Continues a saved session (undefined: the newest) in place of the current one. */
  resume(id?: string): Promise<SavedSession>;
  /** The model in use; see {@link App.switchModel}. */
  modelInfo: ResolvedModel;
  /** Creates (once) the client for the current model; throws CliError when unconfigured. */
  model(): Promise<ModelClient>;
  /** Throws CliError saying what to set when the current model cannot be called. */
  checkModel(): void;
  switchModel(name: string): ResolvedModel;
  systemPrompt(): Promise<string>;
  /** Compacts the conversation now (`/compact`); undefined when there was nothing to compact. */
  compact(signal: AbortSignal): Promise<Extract<AgentEvent, { type: "compact" }> | undefined>;
  /** The context window of the current model (configured, else `[agent] context_window`). */
  contextWindow(): number;
  /** Runs one turn of the session with the current model, tools and system prompt. */
  turn(input: string, signal: AbortSignal): AsyncGenerator<AgentEvent, void, undefined>;
  /** Files that make up the context, for /context. */
  contextFiles(): Promise<ContextFile[]>;
  close(): Promise<void>;
}

export async function createApp(
  opts: { config?: string; model?: string; resume?: string; profile?: string },
  io: Io,
): Promise<App> {
  const loaded = await loadConfig({ path: opts.config, env: { get: io.env }, cwd: io.cwd });
  const { config } = loaded;
  const profileName = opts.profile ?? config.profile.name;
  if (!(PROFILE_NAMES as readonly string[]).includes(profileName)) {
    throw new CliError(
      `unknown profile "${profileName}"; profiles: ${PROFILE_NAMES.join(", ")}`,
      Exit.USAGE,
    );
  }
  const profile = PROFILES[profileName as ProfileName];
  const refused = profileRefusal({
    profile: profile.name,
    adapter: config.facility.adapter,
    autoApprove: config.profile.auto_approve,
  });
  if (refused) throw new CliError(refused, Exit.USAGE);
  let modelInfo = resolveModel(config, opts.model ?? config.llm.default);
  let client: ModelClient | undefined;
  const cs = openControlSystem(config);
  const stateDir = resolvePath(config.state.dir, loaded.baseDir, io);
  const plans = await createPlanPath(loaded, cs, stateDir, io);
  if (config.profile.auto_approve) plans.approver = new AutoApprover();
  const registryOpts = {
    maxOutputChars: config.agent.tool_output_max_chars,
    timeoutMs: config.agent.tool_timeout_s * 1000,
  };
  let session = new Session(crypto.randomUUID(), Date.now());
  const sessions = new SessionStore(`${stateDir}/sessions`);
  const resolve = (p: string) => resolvePath(p, loaded.baseDir, io);
  const clients = new Map<string, ModelClient>();
  const agents = createSubagentManager({
    definitions: await loadAgentDefinitions(
      [
        decodeURIComponent(BUILTIN_AGENTS_URL.pathname),
        ...(config.agents.dir ? [resolve(config.agents.dir)] : []),
      ],
      ALL_TOOLS,
    ),
    catalogue: ALL_TOOLS,
    deps: { cs, now: () => Date.now() },
    registry: registryOpts,
    async modelFor(name) {
      const known = clients.get(name);
      if (known) return known;
      const c = await clientFor(resolveModel(config, name));
      clients.set(name, c);
      return c;
    },
    boundModel: config.agents.model,
    maxTreeTurns: config.agents.max_tree_turns,
    maxTreeTokens: config.agents.max_tree_tokens,
  });
  const skills = config.skills.enabled
    ? await loadSkills([
      decodeURIComponent(BUILTIN_SKILLS_URL.pathname),
      ...(config.skills.dir ? [resolve(config.skills.dir)] : []),
    ])
    : [];
  const activeSkills = (input?: string) =>
    matchSkills(skills, [...session.userInputs(), ...(input ? [input] : [])]);
  const operator = { id: "operator", level: 1, model: () => app.model() };
  // Sub-agents' final results go into the session's file as they end.
  agents.subscribe((ev) => {
    const run = agents.get(ev.id);
    if (ev.status === "started" || !run) return;
    const saving = sessions.saveRun(session.id, run).catch(() => {});
    pendingSaves.add(saving);
    saving.finally(() => pendingSaves.delete(saving));
  });
  const pendingSaves = new Set<Promise<void>>();
  const tools = new ToolRegistry(
    // An observer is never offered the path to a change.
    [
      ...ALL_TOOLS.filter((t) => profile.plans || t.name !== "propose_plan"),
      ...agentTools(agents, operator),
      askUserTool(() => app.operator),
    ],
    { cs, now: () => Date.now(), plans },
    registryOpts,
  );

  function compaction() {
    return {
      ...DEFAULT_COMPACTION,
      contextWindow: modelInfo.contextWindow ?? config.agent.context_window,
      threshold: config.agent.compact_at,
      keepUserMessages: config.agent.compact_keep_user_messages,
      trimChars: config.agent.compact_trim_chars,
    };
  }

  async function clientFor(info: ResolvedModel): Promise<ModelClient> {
    const missing = missingModelSetup(info, { get: io.env });
    if (missing) throw new CliError(missing, Exit.USAGE);
    const { createOpenAiClient } = await import("../llm/openai_client.ts");
    return createOpenAiClient({
      name: info.name,
      model: info.model,
      baseUrl: info.baseUrl,
      apiKey: io.env(info.apiKeyEnv) ?? "",
      stream: info.stream,
      contextWindow: info.contextWindow,
      temperature: config.llm.temperature,
      retry: {
        maxRetries: config.llm.max_retries,
        baseMs: config.llm.retry_base_ms,
        maxMs: config.llm.retry_max_ms,
      },
      requestTimeoutMs: config.llm.request_timeout_s * 1000,
      idleTimeoutMs: config.llm.idle_timeout_s * 1000,
    });
  }

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
    get session() {
      return session;
    },
    agents,
    profile,
    skills,
    activeSkills,
    sessions,
    async resume(id?: string) {
      const saved = await sessions.load(id);
      session = saved.session;
      agents.restore(saved.runs);
      return saved;
    },
    get modelInfo() {
      return modelInfo;
    },
    checkModel,
    async model() {
      if (client) return client;
      client = await clientFor(modelInfo);
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
    contextWindow: () => modelInfo.contextWindow ?? config.agent.context_window,
    async compact(signal, force = true) {
      const ev = await compactSession(
        session,
        await app.model(),
        await app.systemPrompt(),
        compaction(),
        signal,
        force,
      );
      if (ev) session.compactions++;
      return ev;
    },
    async *turn(input: string, signal: AbortSignal) {
      const model = await app.model();
      const skillText = skillsSection(activeSkills(input));
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
          compact: async (s, systemPrompt, sig) => {
            const ev = await compactSession(s, model, systemPrompt, compaction(), sig);
            if (ev) s.compactions++;
            return ev;
          },
        })
      ) {
        if (ev.type === "turn_complete") session.lastTurnUsage = ev.usage;
        // Saved as it goes: a killed process loses at most the call in flight.
        await sessions.save(session);
        yield ev;
      }
      await sessions.save(session);
    },
    async close() {
      agents.cancelAll("the program is ending");
      // Runs stop at their next await; give their final records a moment to reach the file.
      await Promise.all(agents.list().map((r) => agents.wait(r.id, 1_000)));
      await Promise.all(pendingSaves);
      await cs.close();
    },
  };
  if (opts.resume !== undefined) await app.resume(opts.resume || undefined);
  return app;
}
