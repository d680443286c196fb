/**
 * The devices table of a plan's draft is the audit's: before a draft is
 * posted, and when an edit is taken, the table is made again from the run
 * as the audit recorded it (`audited_run.ts`) and must stand in the text
 * whole and unchanged. The operator may change any other text; the numbers
 * cannot silently differ from the audit. A run whose outcome the audit
 * could not take (the draft says so) is checked against the executor's
 * numbers the draft kept.
 *
 * @module
 */
import { z } from "zod";
import type { AuditLog } from "../safety/audit.ts";
import { auditedRun } from "./audited_run.ts";
import type { Draft } from "./draft.ts";
import { writesTable } from "./plan_body.ts";
import { planFacts, type WrittenRow } from "./plan_facts.ts";

/** The facts a draft kept of a run whose outcome is not in the audit. */
const Unrecorded = z.looseObject({
  recorded: z.literal(false),
  writes: z.array(z.looseObject({ device: z.string() })),
});

/** Why the devices table of plan draft `d` is not the audit's (one line), or undefined when it is. */
export async function tableProblem(
  audit: AuditLog,
  d: Pick<Draft, "kind" | "run" | "body" | "facts">,
): Promise<string | undefined> {
  if (d.kind !== "plan") return undefined;
  if (!d.run) return "the draft names no run, so its numbers cannot be checked against the audit";
  const found = await auditedRun(audit, d.run);
  if (!found.ok) return found.why;
  let rows: WrittenRow[];
  if (found.outcome) rows = planFacts(found.run).writes;
  else {
    const kept = Unrecorded.safeParse(d.facts);
    if (!kept.success) return `the audit log holds no outcome of run ${d.run}`;
    rows = kept.data.writes as unknown as WrittenRow[];
  }
  const lines = writesTable(rows);
  while (lines.at(-1) === "") lines.pop();
  // Whole: a blank line before and after it, else a line next to it would be one of its rows.
  if (`\n\n${d.body}\n\n`.includes(`\n\n${lines.join("\n")}\n\n`)) return undefined;
  const body = new Set(d.body.split("\n"));
  const missing = lines.findIndex((l) => l && !body.has(l));
  const what = missing < 0
    ? "rows were added or moved"
    : rows[missing - 2] && lines[missing]?.startsWith("| `")
    ? `the row of \`${rows[missing - 2]?.device}\``
    : `the line "${lines[missing]}"`;
  return `the devices table differs from the audit's record of run ${d.run} (${what}): ` +
    "edit only the text around it, or skip the draft";
}
