/**
 * Finding, reading and overriding the configuration.
 *
 * The file read: `--config FILE` > `ACCEL_AGENT_CONFIG` > `configs/default.toml`
 * beside the program. A file holds what it changes: it is merged onto the
 * config its `extends` names, else onto the shipped `configs/default.toml`,
 * whose unset keys take the built-in defaults. Then `OPENAI_BASE_URL` and
 * `ACCEL_AGENT_MODEL` override the model settings.
 *
 * @module
 */
import { type Config, ConfigSchema, type ModelEntry } from "./schema.ts";
import { ConfigError, type LoadedConfig, validateConfig } from "./load.ts";
import { chainHash, type Layer, LayerError, mergeChain, readChain } from "./layers.ts";
import { NotRegularFileError, readRegularText, TooLargeError } from "../util/bounded_read.ts";
import { configFile, defaultConfigPath, type LoadOptions, nonEmpty } from "./locate.ts";

export { ConfigError, parseConfig } from "./load.ts";
export type { LoadedConfig } from "./load.ts";
export type { Config } from "./schema.ts";

export { DEFAULT_CONFIG_URL, type LoadOptions } from "./locate.ts";

/**
 * Reads the configuration the options point at — the file named, merged onto
 * the site config it extends or the shipped defaults (see `layers.ts`) — and
 * applies environment overrides.
 */
export async function loadConfig(opts: LoadOptions): Promise<LoadedConfig> {
  const file = configFile(opts);
  const home = opts.env.get("HOME") ?? opts.cwd;
  let chain;
  try {
    chain = await readChain(file, defaultConfigPath(), readText, home);
  } catch (e) {
    if (e instanceof LayerError) throw new ConfigError(e.message);
    throw e;
  }
  const top = chain.at(-1);
  const { config, origins } = mergedConfig(chain);
  applyEnv(config, opts.env, origins);
  const path = top?.path;
  const baseDir = path ? path.slice(0, path.lastIndexOf("/")) || "/" : opts.cwd;
  return {
    config,
    path,
    baseDir,
    hash: await chainHash(chain.map((l) => l.text)),
    layers: chain.map(({ path, shown }) => ({ path, shown })),
    origins,
  };
}

/**
 * The chain merged and validated. A problem is reported against the file
 * and line that holds it: each file is checked on its own when the merged
 * whole does not pass.
 */
function mergedConfig(chain: Layer[]): { config: Config; origins: Map<string, string> } {
  if (chain.length === 0) return { config: ConfigSchema.parse({}), origins: new Map() };
  let merged;
  try {
    merged = mergeChain(chain);
  } catch (e) {
    if (e instanceof LayerError) throw new ConfigError(e.message);
    throw e;
  }
  const { raw, origins } = merged;
  const whole = ConfigSchema.safeParse(raw);
  if (whole.success) return { config: simulatorsOwn(whole.data, origins), origins };
  // The file and line that set the value in force: a wrong type a file above overrides is no problem.
  const first = whole.error.issues[0];
  const key = first
    ? [
      ...first.path.map(String),
      ...(first.code === "unrecognized_keys" ? [first.keys[0] ?? ""] : []),
    ]
    : [];
  for (let n = key.length; n > 0; n--) {
    const from = origins.get(key.slice(0, n).join("."));
    if (from) return { config: validateConfig(raw, undefined, from), origins };
  }
  for (const layer of [...chain].reverse()) validateConfig(layer.raw, layer.text, layer.shown);
  return { config: validateConfig(raw, undefined, chain.at(-1)?.shown ?? "config"), origins };
}

/**
 * The shipped defaults' display catalogue is the simulated facility's
 * screens: a facility on EPICS or TANGO that does not name its own gets
 * none, not the simulator's (its limits are set aside in the same way when
 * the plan path is built).
 */
function simulatorsOwn(config: Config, origins: Map<string, string>): Config {
  const shipped = defaultConfigPath();
  const from = origins.get("displays");
  if (config.facility.adapter === "simulator" || !shipped || !from?.startsWith(`${shipped}:`)) {
    return config;
  }
  origins.set(
    "displays",
    `${from}, the simulated facility's screens: none on ${config.facility.adapter}`,
  );
  return { ...config, displays: [] };
}

/** The largest config file read; a bigger one is refused (default.toml is a few KiB). */
export const MAX_CONFIG_BYTES = 1 << 20;

/**
 * A config file's text, or undefined when it does not exist; anything else
 * is a ConfigError, naming the `extends` that led to the file (`via`) if any.
 */
async function readText(
  path: string,
  shown: string,
  via?: string,
): Promise<string | undefined> {
  const at = via ? `${via}: ` : "";
  const fix = via ? "name a config file" : "pass a config file to --config";
  try {
    return await readRegularText(path, MAX_CONFIG_BYTES, shown);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (e instanceof NotRegularFileError) throw new ConfigError(`${at}${e.message}; ${fix}`);
    if (e instanceof TooLargeError) {
      throw new ConfigError(`${at}${e.message}, too large for a config file; check the path`);
    }
    if (e instanceof Deno.errors.IsADirectory) {
      throw new ConfigError(`${at}${shown}: is a directory, not a config file; ${fix}`);
    }
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable) {
      throw new ConfigError(`${at}${shown}: cannot read the config file (${e.message})`);
    }
    throw e;
  }
}

/** Environment overrides for the model endpoint and the model, noted in `origins` when given. */
export function applyEnv(
  config: Config,
  env: LoadOptions["env"],
  origins?: Map<string, string>,
): void {
  const baseUrl = nonEmpty(env.get("OPENAI_BASE_URL"));
  if (baseUrl) {
    config.llm.base_url = baseUrl;
    origins?.set("llm.base_url", "environment OPENAI_BASE_URL");
  }
  const model = nonEmpty(env.get("ACCEL_AGENT_MODEL"));
  if (model) {
    if (!(model in config.llm.models)) {
      config.llm.models[model] = model;
      origins?.set(`llm.models.${model}`, "environment ACCEL_AGENT_MODEL");
    }
    config.llm.default = model;
    origins?.set("llm.default", "environment ACCEL_AGENT_MODEL");
  }
}

/** A named model with everything needed to call it. */
export interface ResolvedModel {
  /** The name the operator uses (`/provider NAME`). */
  name: string;
  /** The model id sent to the endpoint. */
  model: string;
  baseUrl: string;
  apiKeyEnv: string;
  stream: boolean;
  contextWindow?: number;
  priceIn?: number;
  priceOut?: number;
}

/** Looks up a named model; throws ConfigError naming the known ones when absent. */
export function resolveModel(config: Config, name = config.llm.default): ResolvedModel {
  const entry: ModelEntry | undefined = config.llm.models[name];
  if (entry === undefined) {
    const known = Object.keys(config.llm.models).join(", ") || "none";
    throw new ConfigError(
      `model "${name}" is not configured; known models: ${known} ([llm.models])`,
    );
  }
  if (typeof entry === "string") {
    return {
      name,
      model: entry,
      baseUrl: config.llm.base_url,
      apiKeyEnv: config.llm.api_key_env,
      stream: config.llm.stream,
    };
  }
  return {
    name,
    model: entry.model,
    baseUrl: entry.base_url ?? config.llm.base_url,
    apiKeyEnv: entry.api_key_env ?? config.llm.api_key_env,
    stream: entry.stream ?? config.llm.stream,
    contextWindow: entry.context_window,
    priceIn: entry.price_in,
    priceOut: entry.price_out,
  };
}

/**
 * Why the model cannot be called, or undefined when it can: the sentence
 * tells the operator exactly what to set.
 */
export function missingModelSetup(m: ResolvedModel, _env: LoadOptions["env"]): string | undefined {
  // No public endpoint is assumed: a console talks to the model its facility chose.
  if (!m.baseUrl) {
    return `no model endpoint is configured: set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for ` +
      `Ollama) or [llm] base_url in the config file (https://api.openai.com/v1 for OpenAI, with its ` +
      `key in ${m.apiKeyEnv}); to see it work without a model first, run deno task demo`;
  }
  return undefined;
}
