/**
 * The logbook drafts' service from the configuration: the facility's
 * logbook (`src/adapters/logbooks.ts`), drafts under `<state>/elog/drafts`,
 * attachments from the scans and work directories only.
 *
 * @module
 */
import { openLogbook } from "../adapters/logbooks.ts";
import type { LoadedConfig } from "../config/mod.ts";
import { DraftStore, ElogService } from "../elog/mod.ts";
import type { AuditLog } from "../safety/audit.ts";
import type { Io } from "./io.ts";

export async function createElog(
  loaded: LoadedConfig,
  at: {
    stateDir: string;
    scansDir: string;
    /** `[sandbox] work_dir`, resolved. */
    workDir: string;
    audit: AuditLog;
    identity: { operator: string; host: string; configHash: string };
  },
  io: Io,
): Promise<ElogService> {
  const { config } = loaded;
  const e = config.elog;
  return new ElogService({
    store: new DraftStore(`${at.stateDir}/elog/drafts`),
    logbook: await openLogbook(config, at.stateDir, io.env),
    audit: at.audit,
    identity: at.identity,
    attachmentRoots: [at.scansDir, at.workDir],
    attachmentMaxBytes: e.attachment_max_bytes,
    now: () => Date.now(),
  }, {
    logbooks: e.logbooks,
    tags: e.tags,
    level: e.level,
    problemLevel: e.problem_level,
    maxChars: e.max_chars,
    summaryChars: e.summary_chars,
    scansDir: at.scansDir,
  });
}
