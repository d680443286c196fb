/**
 * A first look at the configuration, without its schema: the few values the
 * REPL's early prompt needs (the colour setting, and whether the model can
 * be called), read from the TOML as written plus the environment. It
 * validates nothing; the full load (`loadConfig`) follows and has the last
 * word, so a wrong guess here costs a prompt drawn and erased, never a
 * wrong setting.
 *
 * @module
 */
import { parse } from "smol-toml";
import { glanceRegularText } from "../util/glance_read.ts";
import { configFile, type LoadOptions, nonEmpty } from "./locate.ts";

/** What the early prompt needs to know. */
export interface ConfigGlance {
  color: "auto" | "always" | "never";
  /** Whether the model named by `--model`, ACCEL_AGENT_MODEL or `[llm] default` looks callable. */
  modelReady: boolean;
}

type Table = Record<string, unknown>;
const table = (v: unknown): Table | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? v as Table : undefined;
const text = (v: unknown): string | undefined => typeof v === "string" ? v : undefined;

/** The glance, or undefined when the file cannot be read or parsed (the full load says why). */
export async function glanceConfig(
  opts: LoadOptions & { model?: string },
): Promise<ConfigGlance | undefined> {
  const file = configFile(opts);
  let raw: Table = {};
  if (file) {
    try {
      raw = parse(await glanceRegularText(file.path, 1 << 20, { shown: file.shown }));
    } catch (e) {
      if (file.explicit || !(e instanceof Deno.errors.NotFound)) return undefined;
    }
  }
  const color = text(table(raw.ui)?.color) ?? "auto";
  if (color !== "auto" && color !== "always" && color !== "never") return undefined;
  const llm = table(raw.llm) ?? {};
  const name = opts.model ?? nonEmpty(opts.env.get("ACCEL_AGENT_MODEL")) ?? text(llm.default) ??
    "main";
  const entry = table(table(llm.models)?.[name]);
  const baseUrl = text(entry?.base_url) ?? nonEmpty(opts.env.get("OPENAI_BASE_URL")) ??
    text(llm.base_url) ?? "";
  const keyEnv = text(entry?.api_key_env) ?? text(llm.api_key_env) ?? "OPENAI_API_KEY";
  return { color, modelReady: baseUrl !== "" || !!opts.env.get(keyEnv) };
}
