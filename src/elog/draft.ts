/**
 * A logbook draft as it is kept on disk (`<state>/elog/drafts/<id>.json`)
 * and carried in `ask --json` and `plan run --json`: the entry's text and
 * where it goes, the run and audit records it came from, and what became
 * of it (pending → posting → posted, or skipped).
 *
 * @module
 */
import { z } from "zod";

/** A draft id: a UUID (it becomes part of an Olog search, so no dots or separators). */
export const DRAFT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The largest draft file read (4 MiB): past it the file is damaged or foreign. */
export const MAX_DRAFT_FILE_BYTES = 4 * 1024 * 1024;

const text = (max: number) => z.string().max(max);

export const DraftSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(DRAFT_ID),
  kind: z.enum(["plan", "shift"]),
  created_at: z.string(),
  /**
   * pending: not posted; posting: a post was started (it may have reached the
   * logbook: the next post looks it up first); posted; skipped.
   */
  status: z.enum(["pending", "posting", "posted", "skipped"]),
  title: text(300).min(1),
  body: text(1_000_000).min(1),
  level: text(100),
  logbooks: z.array(text(100)).max(20),
  tags: z.array(text(100)).max(20),
  /** The devices the entry is about (the written ones). */
  devices: z.array(text(256)).max(10_000),
  /** Files sent with the entry: under the scans or work directory only. */
  attachments: z.array(text(4096)).max(20),
  /**
   * Each attachment's SHA-256 when the draft was made: a file changed since
   * (or not readable then) is not sent.
   */
  attachment_sha256: z.record(text(4096), z.string().regex(/^[0-9a-f]{64}$/)).optional(),
  author: text(200),
  plan_hash: text(64).optional(),
  run: text(64).optional(),
  /** The hashes of the audit entries the draft was made from. */
  audit_ids: z.array(text(64)).max(100),
  /** The operator's question that led to the plan, when there was one. */
  question: text(100_000).optional(),
  /** The model's summary (shown as the model's), when there is one. */
  model_summary: text(100_000).optional(),
  /** True once the operator changed the text in the editor. */
  edited: z.boolean(),
  /**
   * The SHA-256 of the text as the program made it: a text that differs was
   * edited (in the editor or in the file) and is posted marked as edited.
   */
  made_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /** What the text was made from, for scripts (numbers from the executor, never the model). */
  facts: z.unknown(),
  /** Posts started (each is recorded before it is sent). */
  attempts: z.int().min(0),
  last_error: text(2000).optional(),
  entry: z.object({ id: text(200), where: text(2000), posted_at: z.string() }).optional(),
  /** False while the audit does not hold the post or the skip (it could not be written). */
  audited: z.boolean().optional(),
  skipped_at: z.string().optional(),
});

export type Draft = z.infer<typeof DraftSchema>;

/** The draft as `--json` shows it. */
export function draftJson(d: Draft, path: string) {
  return {
    id: d.id,
    path,
    kind: d.kind,
    status: d.status,
    title: d.title,
    level: d.level,
    logbooks: d.logbooks,
    tags: d.tags,
    body: d.body,
    attachments: d.attachments,
    devices: d.devices,
    plan_hash: d.plan_hash ?? null,
    run: d.run ?? null,
    audit_ids: d.audit_ids,
    facts: d.facts,
    entry: d.entry ?? null,
    ...(d.last_error ? { last_error: d.last_error } : {}),
  };
}

export type DraftJson = ReturnType<typeof draftJson>;
