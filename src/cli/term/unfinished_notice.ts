/**
 * The warning every command prints while a plan that did not finish is
 * left: what it may have changed (as the audit's write-ahead record of the
 * run has it, never the marker) and the command that restores it. Small on
 * purpose: it is loaded at every start, and reads the audit only when a run
 * is left.
 *
 * @module
 */
import type { CheckedRun } from "../../plan/recovery.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import type { App } from "../../app/app.ts";
import type { Io } from "../../app/io.ts";
import { style } from "./style.ts";
import { errorMessage } from "../../util/errors.ts";

/** One line per unfinished plan on stderr, saying what may still be changed and the command. */
export async function warnUnfinished(app: App, io: Io): Promise<void> {
  let runs: CheckedRun[];
  try {
    runs = await app.plans.service.unfinished();
  } catch (e) {
    io.err(
      `accel-agent: warning: cannot look for unfinished plans in ${
        untrusted(app.stateDir)
      }/running (${untrusted(errorMessage(e))})\n`,
    );
    return;
  }
  const s = style(io.color);
  for (const m of runs) io.err(s.yellow(`accel-agent: warning: ${unfinishedText(m)}\n`));
}

/** What one unfinished plan left, in one line, with the command that restores it. */
export function unfinishedText(c: CheckedRun): string {
  const m = c.marker;
  if (c.problem !== undefined) {
    const recorded = c.originals ? `; the audit records ${originalsText(c.originals)}` : "";
    return untrusted(
      `unfinished run ${m.run} cannot be recovered: ${c.problem}${recorded}. ` +
        `Check its devices by hand, then: accel-agent plan recover ${m.run} --dismiss`,
    );
  }
  const what = !m.outcome
    ? "did not finish (its process ended before recording an outcome)"
    : m.outcome.recorded === false || m.outcome.recorded === undefined
    ? `ended ${m.outcome.status} but its outcome is not in the audit log`
    : `ended ${m.outcome.status} without restoring every device it wrote`;
  return untrusted(
    `plan ${
      m.planHash.slice(0, 12)
    } "${m.description}" started ${m.startedAt} by ${m.operator} on ${m.host} ${what}; ` +
      `${m.outcome ? "devices it wrote" : "devices it may have changed"}: ${
        originalsText(c.originals ?? {})
      }. Restore them: accel-agent plan recover ${m.run} (or --dismiss to acknowledge)`,
  );
}

/** An unfinished run for `plan recover --json`: the marker, with the audit's originals. */
export function unfinishedJson(c: CheckedRun): Record<string, unknown> {
  const { originals: _, damaged: __, ...marker } = c.marker;
  return {
    ...marker,
    originals: c.originals ?? null,
    ...(c.problem !== undefined ? { problem: c.problem } : {}),
  };
}

function originalsText(originals: Record<string, unknown>): string {
  const all = Object.entries(originals).map(([d, v]) => `${d} was ${JSON.stringify(v)}`);
  return all.join(", ") || "none recorded";
}
