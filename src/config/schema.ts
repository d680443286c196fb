/**
 * The configuration file's schema. Every key has a default, so an empty file
 * (or none) is a valid configuration that runs the simulator.
 *
 * @module
 */
import { z } from "zod";
import { EpicsConfigSchema, TangoConfigSchema } from "./facility_schema.ts";
import { SandboxConfigSchema } from "./sandbox_schema.ts";
import { DisplaySchema, LaunchersSchema } from "./displays_schema.ts";
import { ElogConfigSchema } from "./elog_schema.ts";
import { PredictionConfigSchema } from "./prediction_schema.ts";

// Zod compiles a parser for each object schema the first time it parses one; for the few
// parses a command makes, generating that code costs more than it saves (about a fifth of
// reading the config at start-up, measured), so schemas are interpreted.
z.config({ jitless: true });

const positiveInt = z.int().positive();

/** Bounds of durations: every timer can hold them (see `MAX_TIMER_MS`), and each is sane. */
const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;
/** A duration in seconds, above 0 and at most `max`. */
const seconds = (dflt: number, max: number) => z.number().positive().max(max).default(dflt);
/** A duration in milliseconds, an integer from `min` to `max`. */
const millis = (dflt: number, min: number, max: number) => z.int().min(min).max(max).default(dflt);

/** A named model: a bare model id, or a table with its own endpoint. */
export const ModelEntrySchema = z.union([
  z.string().min(1).describe("model id on the default endpoint"),
  z.strictObject({
    model: z.string().min(1),
    base_url: z.url().optional(),
    api_key_env: z.string().min(1).optional(),
    stream: z.boolean().optional(),
    context_window: positiveInt.optional(),
    /** US dollars per million input tokens, for /cost. */
    price_in: z.number().nonnegative().optional(),
    /** US dollars per million output tokens, for /cost. */
    price_out: z.number().nonnegative().optional(),
  }),
]);

/** A facility hook around tool calls (see `src/agent/hooks.ts`). */
const HookSchema = z.strictObject({
  /** Shown in messages; default: the program's file name. */
  name: z.string().min(1).optional(),
  /** Program and arguments, no shell; a path with a slash is relative to the config file. */
  command: z.array(z.string().min(1)).min(1),
  /** Tool names (globs: `*`, `?`) the hook is for; default every tool. */
  tools: z.array(z.string().min(1)).optional(),
  timeout_s: seconds(10, HOUR_S),
});

export const ConfigSchema = z.strictObject({
  llm: z.strictObject({
    base_url: z.string().default(""),
    api_key_env: z.string().min(1).default("OPENAI_API_KEY"),
    default: z.string().min(1).default("main"),
    models: z.record(z.string(), ModelEntrySchema).default({ main: "gpt-4o" }),
    stream: z.boolean().default(true),
    temperature: z.number().min(0).max(2).optional(),
    request_timeout_s: seconds(120, HOUR_S),
    idle_timeout_s: seconds(60, HOUR_S),
    /** Bytes one model response may carry; a longer one is cut off and the turn fails. */
    max_response_bytes: z.int().min(1024).default(8 * 1024 * 1024),
    /**
     * Time one turn may spend waiting for the model (its model calls, however the endpoint
     * trickles); the time its tools run (a plan, an approval) does not count.
     */
    turn_timeout_s: seconds(120, HOUR_S),
    max_retries: z.int().min(0).max(20).default(4),
    retry_base_ms: millis(500, 1, 600_000),
    retry_max_ms: millis(30_000, 1, 600_000),
  }).prefault({}),
  agent: z.strictObject({
    max_iterations: positiveInt.default(20),
    tool_output_max_chars: z.int().min(200).default(20_000),
    tool_timeout_s: seconds(60, DAY_S),
    /** Tool calls of one model message that are run; the rest are answered "not run". */
    max_tool_calls_per_message: z.int().min(1).max(10_000).default(20),
    /** Tool calls of one turn (all its messages) that are run. */
    max_tool_calls_per_turn: z.int().min(1).max(100_000).default(100),
    /** Displays launch_display may open in one turn. */
    max_display_launches_per_turn: z.int().min(0).max(100).default(3),
    /** A display opened is not opened again within this many seconds. */
    display_relaunch_s: z.number().min(0).max(DAY_S).default(30),
    agent_md: z.string().default("AGENT.md"),
    context_dirs: z.array(z.string()).default([]),
    /** Tokens, for models whose [llm.models] entry sets no context_window. */
    context_window: positiveInt.default(128_000),
    /** Compact the conversation when the prompt passes this share of the window. */
    compact_at: z.number().gt(0).lt(1).default(0.8),
    /** The last this-many questions (and all after them) are never compacted. */
    compact_keep_user_messages: positiveInt.default(3),
    /** Older tool results longer than this (characters) are trimmed first. */
    compact_trim_chars: z.int().min(200).default(2_000),
  }).prefault({}),
  agents: z.strictObject({
    /** More sub-agent definitions (*.md), beside the built-in ones; may replace them by name. */
    dir: z.string().default(""),
    /** A named model for sub-agents whose definition names none (default: the operator's). */
    model: z.string().optional(),
    /** Model calls shared by all sub-agents of a session. */
    max_tree_turns: positiveInt.default(200),
    /** Tokens shared by all sub-agents of a session. */
    max_tree_tokens: positiveInt.default(2_000_000),
  }).prefault({}),
  skills: z.strictObject({
    /** false: no skill is ever added to the context. */
    enabled: z.boolean().default(true),
    /** More skills (NAME/SKILL.md), beside the built-in ones; may replace them by name. */
    dir: z.string().default(""),
  }).prefault({}),
  facility: z.strictObject({
    adapter: z.enum(["simulator", "epics", "tango"]).default("simulator"),
  }).prefault({}),
  simulator: z.strictObject({
    seed: z.int().default(1),
    latency_ms: z.number().min(0).max(60_000).default(0),
    /** Grow the facility with generated arcs to at least this many devices (3,060: the default). */
    devices: z.int().min(3060).max(1_000_000).optional(),
  }).prefault({}),
  safety: z.strictObject({
    writes_enabled: z.boolean().default(true),
    limits_file: z.string().default("safety_limits.toml"),
    max_scan_points: positiveInt.default(500),
    /** One week at most: the longest WAIT a plan may hold (MAX_WAIT_SECONDS). */
    max_plan_seconds: seconds(1800, 7 * DAY_S),
    ask_for_read_only_plans: z.boolean().default(false),
    readback_timeout_s: seconds(10, HOUR_S),
    /** How long an approval token from `plan show` is valid, unless issued for a reusable procedure. */
    approval_expiry_s: z.int().min(1).max(86_400).default(3600),
  }).prefault({}),
  /** A plan's predicted effect on the beam (see prediction_schema.ts). */
  prediction: PredictionConfigSchema,
  epics: EpicsConfigSchema.prefault({}),
  tango: TangoConfigSchema.prefault({}),
  /** Logbook entries of plans and shifts (see elog_schema.ts). */
  elog: ElogConfigSchema,
  ui: z.strictObject({
    color: z.enum(["auto", "always", "never"]).default("auto"),
    history_size: z.int().min(0).default(1000),
  }).prefault({}),
  state: z.strictObject({
    dir: z.string().default("~/.local/state/accel-agent"),
  }).prefault({}),
  index: z.strictObject({
    /** A facility's synonym file (TOML, like configs/synonyms.toml), added to the built-in one. */
    synonyms_file: z.string().default(""),
    /** Keep the built index in <state dir>/index, so a large namespace is not rebuilt at each start. */
    cache: z.boolean().default(true),
  }).prefault({}),
  sandbox: SandboxConfigSchema,
  /** The facility's operator screens, opened by launch_display (see displays_schema.ts). */
  displays: z.array(DisplaySchema).default([]),
  launchers: LaunchersSchema,
  /** `[[hooks.before_tool]]` may veto a tool call; `[[hooks.after_tool]]` hears of its end. */
  hooks: z.strictObject({
    before_tool: z.array(HookSchema).default([]),
    after_tool: z.array(HookSchema).default([]),
  }).prefault({}),
  operator: z.string().optional(),
  profile: z.strictObject({
    /** observer (reads only), operator (plans with approval), sim-eval (simulator only). */
    name: z.enum(["observer", "operator", "sim-eval"]).default("operator"),
    /** sim-eval on the simulator only: approve plans that pass preflight without asking. */
    auto_approve: z.boolean().default(false),
  }).prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ModelEntry = z.infer<typeof ModelEntrySchema>;
