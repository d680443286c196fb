/**
 * Posting a draft exactly once. Under the draft's lock: a draft already
 * posted is not sent again; one whose earlier post may have reached the
 * logbook (a lost reply, a process killed mid-post) is first looked up there
 * by its id; the attempt is recorded on disk before anything is sent, so a
 * post the program does not live to see is still looked up next time. The
 * audit records the entry's id, or that the draft was skipped, once: a
 * draft not known to be in the audit (a process killed between the two) is
 * looked up there before it is recorded.
 *
 * @module
 */
import { type Logbook, UncertainPostError } from "../adapters/logbook.ts";
import type { AuditLog } from "../safety/audit.ts";
import { readAuditFile } from "../safety/audit_chain.ts";
import { readJson } from "../util/json_file.ts";
import { z } from "zod";
import { errorMessage } from "../util/errors.ts";
import { readAttachments } from "./attachments.ts";
import { tableProblem } from "./table_check.ts";
import { inline } from "./text.ts";
import { sha256Hex } from "../util/hash.ts";
import type { Draft } from "./draft.ts";
import type { DraftStore } from "./store.ts";

/** What the audit's record of a post or a skip holds (`audited` writes it). */
const LogbookRecord = z.looseObject({
  decision: z.string(),
  results: z.looseObject({ draft: z.string(), entry: z.string().optional() }),
});

export interface PostDeps {
  store: DraftStore;
  logbook: Logbook;
  audit: AuditLog;
  identity: { operator: string; host: string; configHash: string };
  /** Where attachments may come from: the scans and work directories. */
  attachmentRoots: string[];
  attachmentMaxBytes: number;
  now(): number;
}

export type PostResult =
  | {
    status: "posted";
    draft: Draft;
    entryId: string;
    where: string;
    /** True when the logbook already held it (nothing was sent now). */
    already: boolean;
    /** Attachments left out, one line each. */
    refused: string[];
    /** Set when the audit could not record the post. */
    auditError?: string;
    /** Posted before, by the draft's record: why the logbook could not confirm it now. */
    unconfirmed?: string;
  }
  | { status: "kept"; draft: Draft; error: string };

/** Posts draft `id` (see the module's documentation); never throws for the logbook's failures. */
export async function postDraft(
  deps: PostDeps,
  id: string,
  decidedBy: string,
  signal?: AbortSignal,
): Promise<PostResult> {
  return await deps.store.locked(id, async () => {
    const d = await deps.store.load(id);
    const where = deps.logbook.where;
    if (d.status === "posted" && d.entry) {
      return await postedBefore(deps, d, d.entry, decidedBy, signal);
    }
    if (d.attempts > 0) {
      let found: string | undefined;
      try {
        found = await deps.logbook.find(d.id, signal);
      } catch (e) {
        // Still uncertain: the earlier post may be there.
        return await kept(
          deps,
          d,
          `cannot check whether an earlier post reached ${where}: ${errorMessage(e)}`,
          true,
        );
      }
      if (found) return await posted(deps, d, found, decidedBy, true, []);
    }
    const { files, refused } = await readAttachments(
      d.attachments,
      deps.attachmentRoots,
      deps.attachmentMaxBytes,
      d.attachment_sha256 ?? {},
    );
    // The numbers are the audit's: a table that differs is not sent.
    const problem = await tableProblem(deps.audit, d);
    if (problem) return await kept(deps, d, problem, d.status === "posting");
    // Recorded before it is sent: a post that reaches the logbook is then always looked up.
    const sending: Draft = { ...d, status: "posting", attempts: d.attempts + 1 };
    delete sending.last_error;
    await deps.store.save(sending);
    try {
      const entry = await deps.logbook.post({
        draftId: d.id,
        title: d.title,
        body: await postedBody(d, deps.identity.operator),
        level: d.level,
        logbooks: d.logbooks,
        tags: d.tags,
        devices: d.devices,
        author: d.author,
        attachments: files,
      }, signal);
      return await posted(deps, sending, entry.id, decidedBy, false, refused);
    } catch (e) {
      if (signal?.aborted && e === signal.reason) {
        return await kept(
          deps,
          sending,
          "the post was cancelled; it may have reached the logbook",
          true,
        );
      }
      return await kept(deps, sending, errorMessage(e), e instanceof UncertainPostError);
    }
  });
}

/**
 * A draft that says it was posted: believed when the logbook holds it as
 * that entry (and only then recorded in the audit, when a killed process
 * did not), said as the draft's record when the logbook cannot be asked,
 * refused when the logbook holds no such entry. Nothing is sent.
 */
async function postedBefore(
  deps: PostDeps,
  d: Draft,
  entry: NonNullable<Draft["entry"]>,
  decidedBy: string,
  signal?: AbortSignal,
): Promise<PostResult> {
  const where = deps.logbook.where;
  let found: string | undefined;
  let unconfirmed: string | undefined;
  try {
    found = await deps.logbook.find(d.id, signal);
  } catch (e) {
    unconfirmed = errorMessage(e);
  }
  if (unconfirmed === undefined && found !== entry.id) {
    const holds = found === undefined ? "no entry" : `entry ${found}`;
    return {
      status: "kept",
      draft: d,
      error: `the draft says it was posted to ${entry.where} as entry ${entry.id}, but ${where} ` +
        `holds ${holds} of it; nothing was sent`,
    };
  }
  // Not known to be in the audit (a process killed before it said so): recorded once confirmed.
  const auditError = d.audited === true
    ? undefined
    : unconfirmed === undefined
    ? await audited(deps, d, decidedBy, true)
    : "not recorded in the audit yet: the logbook could not confirm it";
  return {
    status: "posted",
    draft: d,
    entryId: entry.id,
    where,
    already: true,
    refused: [],
    auditError,
    ...(unconfirmed === undefined ? {} : { unconfirmed }),
  };
}

/** The text posted: the draft's, headed by a line saying so when it is not as the program made it. */
async function postedBody(d: Draft, operator: string): Promise<string> {
  if (!d.edited && d.made_sha256 === await sha256Hex(d.body)) return d.body;
  const table = d.kind === "plan" ? "; the devices table is as the audit records it" : "";
  return `*Edited by ${inline(operator, 100)} before it was posted${table}.*\n\n${d.body}`;
}

/** Marks draft `id` skipped (audited); a draft already posted stays posted. */
export async function skipDraft(
  deps: PostDeps,
  id: string,
  decidedBy: string,
  signal?: AbortSignal,
): Promise<{ draft: Draft; postedAs?: string; auditError?: string }> {
  return await deps.store.locked(id, async () => {
    let d = await deps.store.load(id);
    if (d.status === "posted" && d.entry) return { draft: d, postedAs: d.entry.id };
    if (d.status === "skipped") {
      const auditError = d.audited === true ? undefined : await audited(deps, d, decidedBy, true);
      return { draft: await deps.store.load(id), ...(auditError ? { auditError } : {}) };
    }
    if (d.attempts > 0) {
      // An earlier post may be in the logbook: then it was posted, not skipped.
      let found: string | undefined;
      try {
        found = await deps.logbook.find(d.id, signal);
      } catch (e) {
        throw new Error(
          `cannot check whether an earlier post of draft ${d.id} reached ${deps.logbook.where} ` +
            `(${errorMessage(e)}); it is left as it is: skip it again once the logbook answers`,
        );
      }
      if (found) {
        const r = await posted(deps, d, found, decidedBy, true, []);
        return { draft: r.draft, postedAs: found };
      }
    }
    d = { ...d, status: "skipped", skipped_at: new Date(deps.now()).toISOString() };
    await deps.store.save(d);
    const auditError = await audited(deps, d, decidedBy);
    return { draft: await deps.store.load(id), ...(auditError ? { auditError } : {}) };
  });
}

async function posted(
  deps: PostDeps,
  d: Draft,
  entryId: string,
  decidedBy: string,
  already: boolean,
  refused: string[],
): Promise<Extract<PostResult, { status: "posted" }>> {
  const where = deps.logbook.where;
  const done: Draft = {
    ...d,
    status: "posted",
    entry: { id: entryId, where, posted_at: new Date(deps.now()).toISOString() },
  };
  delete done.last_error;
  await deps.store.save(done);
  const auditError = await audited(deps, done, decidedBy);
  const draft = auditError ? done : await deps.store.load(d.id);
  return { status: "posted", draft, entryId, where, already, refused, auditError };
}

async function kept(
  deps: PostDeps,
  d: Draft,
  error: string,
  uncertain = false,
): Promise<PostResult> {
  const next: Draft = {
    ...d,
    status: uncertain ? "posting" : "pending",
    last_error: error.slice(0, 2000),
  };
  await deps.store.save(next).catch(() => {});
  return { status: "kept", draft: next, error };
}

/**
 * Appends the audit record of a post or a skip; the error's text when it
 * cannot. `lookFirst`: the record may be there already (a process killed
 * after writing it, before the draft said so), and is then not written again.
 */
async function audited(
  deps: PostDeps,
  d: Draft,
  decidedBy: string,
  lookFirst = false,
): Promise<string | undefined> {
  const isPost = d.status === "posted";
  if (lookFirst && await inAudit(deps.audit, d).catch(() => false)) {
    await deps.store.save({ ...d, audited: true }).catch(() => {});
    return undefined;
  }
  try {
    await deps.audit.append({
      ...deps.identity,
      planHash: d.plan_hash ?? "",
      plan: null,
      decision: isPost ? "elog_posted" : "elog_skipped",
      decidedBy,
      status: isPost ? "posted" : "skipped",
      // The plan's run id stays inside: a record with `run` would close that run in the audit.
      results: {
        draft: d.id,
        kind: d.kind,
        title: d.title,
        ...(d.run ? { plan_run: d.run } : {}),
        ...(isPost && d.entry ? { entry: d.entry.id, logbook: d.entry.where } : {}),
      },
    });
  } catch (e) {
    const why = errorMessage(e);
    await deps.store.save({ ...d, audited: false }).catch(() => {});
    return `the audit log could not record it (${why})`;
  }
  await deps.store.save({ ...d, audited: true }).catch(() => {});
  return undefined;
}

/** Whether the audit holds the record of this draft's post (of its entry) or skip. */
async function inAudit(audit: AuditLog, d: Draft): Promise<boolean> {
  const decision = d.status === "posted" ? "elog_posted" : "elog_skipped";
  const needle = `"draft":${JSON.stringify(d.id)}`;
  for (const file of (await audit.files()).reverse()) {
    const text = await readAuditFile(file);
    if (!text.includes(needle)) continue;
    for (const line of text.split("\n")) {
      if (!line.includes(needle) || !line.includes(decision)) continue;
      const read = readJson(LogbookRecord, line);
      if (!read.ok || read.value.decision !== decision || read.value.results.draft !== d.id) {
        continue;
      }
      if (decision === "elog_skipped" || read.value.results.entry === d.entry?.id) return true;
    }
  }
  return false;
}
