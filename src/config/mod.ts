/**
 * Finding, reading and overriding the configuration.
 *
 * Precedence: `--config FILE` > `ACCEL_AGENT_CONFIG` > `configs/default.toml`
 * beside the program > built-in defaults; then `OPENAI_BASE_URL` and
 * `ACCEL_AGENT_MODEL` override the model settings.
 *
 * @module
 */
import { type Config, ConfigSchema, type ModelEntry } from "./schema.ts";
import { sha256Hex } from "../util/hash.ts";
import { ConfigError, type LoadedConfig, parseConfig } from "./load.ts";
import { NotRegularFileError, readRegularText, TooLargeError } from "../util/bounded_read.ts";
import { configFile, type LoadOptions, nonEmpty } from "./locate.ts";

export { ConfigError, parseConfig } from "./load.ts";
export type { LoadedConfig } from "./load.ts";
export type { Config } from "./schema.ts";

export { DEFAULT_CONFIG_URL, type LoadOptions } from "./locate.ts";

/** Reads the configuration the options point at and applies environment overrides. */
export async function loadConfig(opts: LoadOptions): Promise<LoadedConfig> {
  const file = configFile(opts);
  let text: string | undefined;
  let path: string | undefined;
  if (file?.explicit) {
    path = file.path;
    text = await readText(path, file.shown);
    if (text === undefined) {
      throw new ConfigError(
        `${file.shown}: config file not found; pass an existing file to --config`,
      );
    }
  } else if (file) {
    path = file.path;
    text = await readText(path, path);
    if (text === undefined) path = undefined;
  }
  const config = text === undefined ? ConfigSchema.parse({}) : parseConfig(text, path ?? "config");
  applyEnv(config, opts.env);
  const baseDir = path ? path.slice(0, path.lastIndexOf("/")) || "/" : opts.cwd;
  return { config, path, baseDir, hash: await sha256Hex(text ?? "") };
}

/** The largest config file read; a bigger one is refused (default.toml is a few KiB). */
export const MAX_CONFIG_BYTES = 1 << 20;

async function readText(path: string, shown: string): Promise<string | undefined> {
  try {
    return await readRegularText(path, MAX_CONFIG_BYTES, shown);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (e instanceof NotRegularFileError) {
      throw new ConfigError(`${e.message}; pass a config file to --config`);
    }
    if (e instanceof TooLargeError) {
      throw new ConfigError(`${e.message}, too large for a config file; check the path`);
    }
    if (e instanceof Deno.errors.IsADirectory) {
      throw new ConfigError(`${shown}: is a directory, not a config file`);
    }
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable) {
      throw new ConfigError(`${shown}: cannot read the config file (${e.message})`);
    }
    throw e;
  }
}

/** Environment overrides for the model endpoint and the model. */
export function applyEnv(config: Config, env: LoadOptions["env"]): void {
  const baseUrl = nonEmpty(env.get("OPENAI_BASE_URL"));
  if (baseUrl) config.llm.base_url = baseUrl;
  const model = nonEmpty(env.get("ACCEL_AGENT_MODEL"));
  if (model) {
    if (!(model in config.llm.models)) config.llm.models[model] = model;
    config.llm.default = model;
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
export function missingModelSetup(m: ResolvedModel, env: LoadOptions["env"]): string | undefined {
  if (!m.baseUrl && !env.get(m.apiKeyEnv)) {
    return `no model endpoint is configured: set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) ` +
      `or ${m.apiKeyEnv} for api.openai.com, or [llm] base_url in the config file; ` +
      "to see it work without a model first, run deno task demo";
  }
  return undefined;
}
