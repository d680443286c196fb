/**
 * The warning every command prints while a plan that did not finish is
 * left: what it may have changed and the command that restores it. Small on
 * purpose: it is loaded at every start.
 *
 * @module
 */
import type { RunMarker } from "../../plan/run_journal.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import type { App } from "../../app/app.ts";
import type { Io } from "../../app/io.ts";
import { style } from "./style.ts";
import { errorMessage } from "../../util/errors.ts";

/** One line per unfinished plan on stderr, saying what may still be changed and the command. */
export async function warnUnfinished(app: App, io: Io): Promise<void> {
  let runs: RunMarker[];
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
export function unfinishedText(m: RunMarker): string {
  const what = m.outcome
    ? `ended ${m.outcome.status} but its outcome is not in the audit log`
    : "did not finish (its process ended before recording an outcome)";
  const originals = Object.entries(m.originals).map(([d, v]) => `${d} was ${JSON.stringify(v)}`);
  return untrusted(
    `plan ${
      m.planHash.slice(0, 12)
    } "${m.description}" started ${m.startedAt} by ${m.operator} on ${m.host} ${what}; ` +
      `${m.outcome ? "devices it wrote" : "devices it may have changed"}: ${
        originals.join(", ") || "none recorded"
      }. Restore them: accel-agent plan recover ${m.run} (or --dismiss to acknowledge)`,
  );
}
