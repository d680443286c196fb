/**
 * Plans as files: TOML or JSON in, JSON out. A saved plan re-hashes to the
 * same hash whatever its formatting, since the hash covers content only.
 *
 * @module
 */
import { errorMessage } from "../util/errors.ts";
import { parse, TomlError } from "smol-toml";
import { parsePlan, type Plan, planHash } from "../plan_model/plan.ts";
import { isRefusal, readRegularText } from "../util/bounded_read.ts";
import { makePrivateDir, writePrivateFile } from "../util/private_files.ts";

/** The largest plan file read (a plan of thousands of steps is a few hundred KiB). */
export const MAX_PLAN_BYTES = 4 << 20;

/** A plan file that cannot be used; the CLI exits 2 on it. */
export class PlanFileError extends Error {
  override name = "PlanFileError";
}

/** Reads and validates a plan file (.toml, or JSON otherwise). */
export async function readPlanFile(path: string): Promise<Plan> {
  let text: string;
  try {
    text = await readRegularText(path, MAX_PLAN_BYTES, {
      fix: "give a plan file (.json or .toml)",
    });
  } catch (e) {
    if (isRefusal(e)) throw new PlanFileError(e.message);
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

/** Saves a plan as JSON named after its hash (0600, whole or not at all); returns the path. */
export async function savePlan(dir: string, plan: Plan, name?: string): Promise<string> {
  const hash = await planHash(plan);
  const base = name
    ? name.replace(/[^\w.-]/g, "_").replace(/\.json$/, "")
    : `plan-${hash.slice(0, 12)}`;
  const path = `${dir}/${base}.json`;
  try {
    await makePrivateDir(dir);
    await writePrivateFile(path, `${JSON.stringify(plan, null, 2)}\n`);
  } catch (e) {
    // A full disk: said as what could not be done, and where (nothing half-written is left).
    throw new Error(`the plan could not be saved in ${dir} (${errorMessage(e).split(": ")[0]})`);
  }
  return path;
}
