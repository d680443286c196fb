/**
 * Plans as files: TOML or JSON in, JSON out. A saved plan re-hashes to the
 * same hash whatever its formatting, since the hash covers content only.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";
import { readRegularText } from "../util/bounded_read.ts";
import { parse, TomlError } from "smol-toml";
import { parsePlan, type Plan, planHash } from "../plan_model/plan.ts";

/** A plan file that cannot be used; the CLI exits 2 on it. */
export class PlanFileError extends Error {
  override name = "PlanFileError";
}

/** The largest plan file read: 500 actions of bounded text take far less. */
const MAX_PLAN_BYTES = 4 << 20;

/** Reads and validates a plan file (.toml, or JSON otherwise). */
export async function readPlanFile(path: string): Promise<Plan> {
  let text: string;
  try {
    // A FIFO would block the open and /dev/zero never end: both refused after a stat.
    text = await readRegularText(path, MAX_PLAN_BYTES);
  } catch (e) {
    throw new PlanFileError(`${path}: cannot read the plan file (${errorMessage(e)})`);
  }
  let raw: unknown;
  try {
    raw = path.endsWith(".toml") ? parse(text) : JSON.parse(text);
  } catch (e) {
    const where = e instanceof TomlError ? `:${e.line}:${e.column}` : "";
    throw new PlanFileError(
      `${path}${where}: not valid ${path.endsWith(".toml") ? "TOML" : "JSON"}: ${
        errorMessage(e).split("\n")[0]
      }`,
    );
  }
  const parsed = parsePlan(raw);
  if (!parsed.ok) throw new PlanFileError(`${path}: ${parsed.errors.join("; ")}`);
  return parsed.plan;
}

/** Saves a plan as JSON named after its hash; returns the path. */
export async function savePlan(dir: string, plan: Plan, name?: string): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const hash = await planHash(plan);
  const base = name
    ? name.replace(/[^\w.-]/g, "_").replace(/\.json$/, "")
    : `plan-${hash.slice(0, 12)}`;
  const path = `${dir}/${base}.json`;
  await Deno.writeTextFile(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}
