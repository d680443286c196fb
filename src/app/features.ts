/**
 * The parts of the app added for long sessions and delegation: the profile
 * check, sub-agents, skills, compaction settings, the session file, and the
 * client factory for named models. Kept out of `app.ts` so that file stays
 * the plain wiring of the core.
 *
 * @module
 */
import type { ToolHooks } from "../agent/hooks.ts";
import type { CallCaps } from "../agent/call_caps.ts";
import type { ControlReader } from "../adapters/adapter.ts";
import { type CompactionOptions, DEFAULT_COMPACTION } from "../agent/compaction.ts";
import type { Session } from "../agent/session.ts";
import type { SubagentManager } from "../agent/subagents/manager.ts";
import { type Config, type ResolvedModel, resolveModel } from "../config/mod.ts";
import { missingModelSetup } from "../config/mod.ts";
import type { ModelClient } from "../llm/types.ts";
import {
  AutoApprover,
  type Profile,
  PROFILE_NAMES,
  type ProfileName,
  profileRefusal,
  PROFILES,
} from "../profiles/profile.ts";
import { matchSkills, type Skill } from "../skills/skill.ts";
import { agentTools } from "../tools/agent_tools.ts";
import { askUserTool, type OperatorChannel } from "../tools/ask_user.ts";
import type { Tool, ToolDeps } from "../tools/define.ts";
import { ALL_TOOLS, SANDBOX_TOOLS } from "../tools/mod.ts";
import { launchDisplayTool, LaunchGate } from "../tools/launch_display.ts";
import { plotTool } from "../tools/plot.ts";
import { DisplayCatalogue } from "../displays/catalogue.ts";
import { normalize } from "../config/paths.ts";
import { spawnDetached } from "../displays/launch.ts";
import type { SandboxDeps } from "../sandbox/types.ts";
import type { RegistryOptions } from "../tools/registry.ts";
import { CliError, Exit } from "./exit.ts";
import type { Io } from "./io.ts";
import type { PlanPath } from "./plan_wiring.ts";
import { SessionStore } from "./session_store.ts";
import { BUILTIN_SKILLS_URL, loadSkills } from "./skill_wiring.ts";
import {
  BUILTIN_AGENTS_URL,
  createSubagentManager,
  loadAgentDefinitions,
} from "./subagent_wiring.ts";

/**
 * The profile in force; throws CliError (exit 2) for an unknown one or one
 * refused in this setting (automatic approval on a real machine…).
 */
export function checkProfile(config: Config, name: string = config.profile.name): Profile {
  if (!(PROFILE_NAMES as readonly string[]).includes(name)) {
    throw new CliError(
      `unknown profile "${name}"; profiles: ${PROFILE_NAMES.join(", ")}`,
      Exit.USAGE,
    );
  }
  const profile = PROFILES[name as ProfileName];
  const refused = profileRefusal({
    profile: profile.name,
    adapter: config.facility.adapter,
    autoApprove: config.profile.auto_approve,
  });
  if (refused) throw new CliError(refused, Exit.USAGE);
  return profile;
}

/** A client for a resolved model; throws CliError saying what to set when it cannot be called. */
export async function createModelClient(
  info: ResolvedModel,
  config: Config,
  io: Io,
): Promise<ModelClient> {
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
    maxResponseBytes: config.llm.max_response_bytes,
  });
}

/** The caps on the tool calls of one model message and one turn, from `[agent]`. */
export function toolCallCaps(config: Config): CallCaps {
  return {
    perMessage: config.agent.max_tool_calls_per_message,
    perTurn: config.agent.max_tool_calls_per_turn,
  };
}

export interface FeatureDeps {
  config: Config;
  profile: Profile;
  io: Io;
  cs: ControlReader;
  /** The device index, for informal searches (absent when the backend has none). */
  devices?: ToolDeps["devices"];
  plans: PlanPath;
  stateDir: string;
  registry: RegistryOptions;
  /** A path from the config, made absolute. */
  resolve(path: string): string;
  /** The current session (it changes on resume). */
  session(): Session;
  /** The operator's model (the parent of level-2 sub-agents). */
  model(): Promise<ModelClient>;
  /** Who answers ask_user now. */
  operator(): OperatorChannel | undefined;
  /** The Python sandbox, when it is on. */
  sandbox?: SandboxDeps;
  /** The facility's hooks around tool calls, for sub-agents' calls too. */
  hooks?: ToolHooks;
  /** Keeps the whole text of a cut tool result in the session's directory. */
  keepFullResult?: (callId: string, text: string) => Promise<string>;
}

export interface Features {
  agents: SubagentManager;
  skills: Skill[];
  sessions: SessionStore;
  /** The operator's tools: the core ones the profile allows, the agent tools and ask_user. */
  tools: Tool[];
  activeSkills(input?: string): Skill[];
  compaction(contextWindow: number): CompactionOptions;
  /** Cancels running sub-agents and waits for their last records. */
  close(): Promise<void>;
}

export async function createFeatures(d: FeatureDeps): Promise<Features> {
  const { config, profile } = d;
  if (config.profile.auto_approve) d.plans.approver = new AutoApprover();
  const sessions = new SessionStore(`${d.stateDir}/sessions`, {
    onRecovered: (m) => d.io.err(`accel-agent: ${m}\n`),
  });
  const clients = new Map<string, ModelClient>();
  const agents = createSubagentManager({
    definitions: await loadAgentDefinitions(
      [
        decodeURIComponent(BUILTIN_AGENTS_URL.pathname),
        ...(config.agents.dir ? [d.resolve(config.agents.dir)] : []),
      ],
      ALL_TOOLS,
    ),
    catalogue: ALL_TOOLS,
    deps: { cs: d.cs, now: () => Date.now(), devices: d.devices },
    registry: d.registry,
    async modelFor(name) {
      const known = clients.get(name);
      if (known) return known;
      const c = await createModelClient(resolveModel(config, name), config, d.io);
      clients.set(name, c);
      return c;
    },
    boundModel: config.agents.model,
    hooks: d.hooks,
    keepFullResult: d.keepFullResult,
    toolCalls: toolCallCaps(config),
    maxTreeTurns: config.agents.max_tree_turns,
    maxTreeTokens: config.agents.max_tree_tokens,
  });
  // Sub-agents' final results go into the session's file as they end.
  const pendingSaves = new Set<Promise<void>>();
  agents.subscribe((ev) => {
    const run = agents.get(ev.id);
    if (ev.status === "started" || !run) return;
    const saving = sessions.saveRun(d.session().id, run).catch(() => {});
    pendingSaves.add(saving);
    saving.finally(() => pendingSaves.delete(saving));
  });
  const skills = config.skills.enabled
    ? await loadSkills([
      decodeURIComponent(BUILTIN_SKILLS_URL.pathname),
      ...(config.skills.dir ? [d.resolve(config.skills.dir)] : []),
    ])
    : [];
  const displays = {
    catalogue: new DisplayCatalogue(
      config.displays,
      config.launchers,
      (p) => normalize(d.resolve(p)),
    ),
    spawn: spawnDetached,
    gate: new LaunchGate({
      perTurn: config.agent.max_display_launches_per_turn,
      relaunchMs: config.agent.display_relaunch_s * 1000,
    }),
  };
  return {
    agents,
    skills,
    sessions,
    tools: [
      // An observer is never offered the path to a change.
      ...ALL_TOOLS.filter((t) => profile.plans || t.name !== "propose_plan"),
      // An observer may list the scripts but runs no Python that writes files.
      ...(d.sandbox ? SANDBOX_TOOLS.filter((t) => profile.sandboxWrites || t.readOnly) : []),
      ...agentTools(agents, { id: "operator", level: 1, model: d.model }),
      askUserTool(d.operator),
      launchDisplayTool(() => displays),
      plotTool(() => ({ workDir: d.resolve(config.sandbox.work_dir), scansDir: d.plans.scansDir })),
    ],
    activeSkills: (input) =>
      matchSkills(skills, [...d.session().userInputs(), ...(input ? [input] : [])]),
    compaction: (contextWindow) => ({
      ...DEFAULT_COMPACTION,
      contextWindow,
      threshold: config.agent.compact_at,
      keepUserMessages: config.agent.compact_keep_user_messages,
      trimChars: config.agent.compact_trim_chars,
    }),
    async close() {
      agents.cancelAll("the program is ending");
      // Runs stop at their next await; their final records then reach the file.
      await Promise.all(agents.list().map((r) => agents.wait(r.id, 1_000)));
      await Promise.all(pendingSaves);
    },
  };
}
