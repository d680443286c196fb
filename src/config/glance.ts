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
import { glanceRegularText } from "../util/glance_read.ts";
import { configFile, defaultConfigPath, type LoadOptions, nonEmpty } from "./locate.ts";
import { mergeChain, readChain, type Table } from "./layers.ts";

/** What the early prompt needs to know. */
export interface ConfigGlance {
  color: "auto" | "always" | "never";
  /** Whether the model named by `--model`, ACCEL_AGENT_MODEL or `[llm] default` looks callable. */
  modelReady: boolean;
}

const table = (v: unknown): Table | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? v as Table : undefined;
const text = (v: unknown): string | undefined => typeof v === "string" ? v : undefined;

/** The glance, or undefined when the files cannot be read or parsed (the full load says why). */
export async function glanceConfig(
  opts: LoadOptions & { model?: string },
): Promise<ConfigGlance | undefined> {
  const file = configFile(opts);
  let raw: Table = {};
  try {
    const read = async (path: string, shown: string) => {
      try {
        return await glanceRegularText(path, 1 << 20, { shown });
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      }
    };
    const home = opts.env.get("HOME") ?? opts.cwd;
    raw = mergeChain(await readChain(file, defaultConfigPath(), read, home)).raw;
  } catch {
    return undefined;
  }
  const color = text(table(raw.ui)?.color) ?? "auto";
  if (color !== "auto" && color !== "always" && color !== "never") return undefined;
  const llm = table(raw.llm) ?? {};
  const name = opts.model ?? nonEmpty(opts.env.get("ACCEL_AGENT_MODEL")) ?? text(llm.default) ??
    "main";
  const entry = table(table(llm.models)?.[name]);
  const baseUrl = text(entry?.base_url) ?? nonEmpty(opts.env.get("OPENAI_BASE_URL")) ??
    text(llm.base_url) ?? "";
  return { color, modelReady: baseUrl !== "" };
}
