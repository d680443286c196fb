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
import { MAX_ROWS, writesTable } from "./plan_body.ts";
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
  const what = tableMismatch(d.body, rows);
  if (what === undefined) return undefined;
  return `the devices table differs from the audit's record of run ${d.run} (${what}): ` +
    "edit only the text around it, or skip the draft";
}

/**
 * What is wrong with the devices table in `body` for `rows` (in a few
 * words), or undefined when it stands there whole: at the first line that
 * starts it (a copy further on, in the model's fenced words, does not
 * count), every row, or the first rows and the line saying how many more
 * (as a text cut to its cap has it), with a blank line before and after it.
 */
export function tableMismatch(body: string, rows: WrittenRow[]): string | undefined {
  const lines = body.split("\n");
  const full = writesTable(rows, Math.min(rows.length, MAX_ROWS));
  while (full.at(-1) === "") full.pop();
  const at = lines.indexOf(full[0] as string);
  // Whole, with a blank line before and after it: a line next to it would be one of its rows.
  const standsAt = (limit: number) => {
    const want = writesTable(rows, limit);
    while (want.at(-1) === "") want.pop();
    return (at === 0 || lines[at - 1] === "") && (lines[at + want.length] ?? "") === "" &&
      want.every((l, i) => lines[at + i] === l);
  };
  if (at >= 0) {
    if (standsAt(Math.min(rows.length, MAX_ROWS))) return undefined;
    const shown = lines.slice(at + 2).findIndex((l) => !l.startsWith("| "));
    if (full[0]?.startsWith("| ") && shown >= 0 && shown < rows.length && standsAt(shown)) {
      return undefined;
    }
  }
  // Where it first differs: from where it starts, else the first of its lines not there at all.
  let missing: number;
  if (at >= 0) {
    missing = full.findIndex((l, i) => lines[at + i] !== l);
    const later = missing < 0 ? -1 : lines.indexOf(full[missing] as string, at + missing);
    const pushedDown = later > at + missing &&
      lines.slice(at + missing, later).every((l) => l.startsWith("| "));
    if (missing < 0 || pushedDown) return "rows were added or moved";
  } else {
    const present = new Set(lines);
    missing = full.findIndex((l) => l && !present.has(l));
  }
  return rows[missing - 2] && full[missing]?.startsWith("| `")
    ? `the row of \`${rows[missing - 2]?.device}\``
    : `the line "${full[missing]}"`;
}
