/**
 * `audit verify [FILE]`: the audit trail's chain, MACs and head record,
 * without an LLM.
 *
 * @module
 */
import { AuditError, AuditLog, chainBreakText, GENESIS, readHead } from "../../safety/audit.ts";
import {
  type UnfinishedRun,
  unfinishedRuns,
  verifyAudit,
  verifyAuditDir,
} from "../../safety/audit_verify.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { fail } from "./fail.ts";
import { errorMessage } from "../../util/errors.ts";
import { isRefusal } from "../../util/bounded_read.ts";

/**
 * `audit verify [FILE]`: one file, or the whole audit directory from its
 * first entry and against its head record; MACs are checked with the audit
 * key when the state directory has one.
 */
export async function runAuditVerify(
  app: App,
  file: string | undefined,
  json: boolean,
  io: Io,
): Promise<number> {
  const dir = app.plans.auditDir;
  let result;
  let unfinished: UnfinishedRun[] = [];
  try {
    const files = file ? [file] : await new AuditLog(dir).files();
    unfinished = await unfinishedRuns(files);
    const headPath = app.plans.audit.headPath;
    if (files.length === 0 && (await readHead(headPath)) === undefined) {
      // A console where nothing was ever recorded: nothing is broken, and a script may go on.
      if (file === undefined) return noAuditYet(dir, json, io);
      fail(io, json, "error", `no audit files in ${dir}`, Exit.FAILURE);
    }
    const key = await app.plans.auditKey();
    result = file
      ? await verifyAudit(files, false, key)
      : await verifyAuditDir(dir, files, key, headPath);
  } catch (e) {
    if (e instanceof CliError) throw e;
    // The reader's refusal (a FIFO, a device, too large) names the file already.
    const why = isRefusal(e) || e instanceof AuditError
      ? e.message
      : `cannot read ${file ?? dir}: ${errorMessage(e)}`;
    fail(io, json, "error", why, Exit.FAILURE);
  }
  if (json) io.out(`${terminalJson({ ...result, unfinished })}\n`);
  if (!result.ok) {
    throw new CliError(chainBreakText(result), Exit.FAILURE);
  }
  if (!json) {
    const keyed = result.unkeyed === 0
      ? "keyed"
      : result.keyed === 0
      ? "unkeyed"
      : `${result.keyed} keyed, ${result.unkeyed} unkeyed`;
    io.out(
      `audit chain intact: ${result.entries} entries in ${result.files} file${
        result.files > 1 ? "s" : ""
      } (${keyed}; head ${result.head})\n`,
    );
    for (const n of result.notes) io.out(`  note: ${n}\n`);
    for (const u of unfinished) {
      io.out(
        `  unfinished: plan ${u.planHash.slice(0, 12)} (run ${u.run}) recorded its originals at ${
          untrusted(u.time)
        } and no outcome: ${
          untrusted(JSON.stringify(u.originals))
        }; accel-agent plan recover ${u.run}\n`,
      );
    }
  }
  return Exit.OK;
}

/** `audit verify` where no entry and no head record exist yet: said, exit 0. */
function noAuditYet(dir: string, json: boolean, io: Io): number {
  const note = `no audit yet: nothing has been recorded in ${dir}`;
  if (json) {
    io.out(
      `${
        terminalJson({
          ok: true,
          entries: 0,
          files: 0,
          lastHash: GENESIS,
          keyed: 0,
          unkeyed: 0,
          head: "absent",
          notes: [note],
          unfinished: [],
        })
      }\n`,
    );
  } else io.out(`${untrusted(note)}\n`);
  return Exit.OK;
}
