/**
 * The door to a logbook that takes entries: Olog on an EPICS facility, the
 * simulator's own logbook, or a local file. Only the e-log poster holds
 * one, and only after the operator said "post".
 *
 * Every entry carries its draft's id, so a post can be made exactly once:
 * before sending a draft again (a reply that was lost, a process killed
 * mid-post) the poster asks {@link Logbook.find} whether the logbook
 * already holds it.
 *
 * @module
 */

/** A file sent with an entry. */
export interface LogbookAttachment {
  /** The file's name as the logbook shows it (no directory). */
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

/** One entry to post. */
export interface LogbookEntry {
  /** The draft's id: the entry's idempotency key, stored with it. */
  draftId: string;
  title: string;
  /** CommonMark text. */
  body: string;
  level: string;
  logbooks: string[];
  tags: string[];
  /** The devices the entry is about (the file logbooks index them for `logs --device`). */
  devices: string[];
  /** Who posts (the file logbooks record it; Olog takes the authenticated user). */
  author: string;
  attachments: LogbookAttachment[];
}

/** Where an entry went. */
export interface PostedEntry {
  /** The logbook's id of the entry. */
  id: string;
}

export interface Logbook {
  /** "olog", "simulator" or "file". */
  readonly kind: string;
  /** Where entries go, for messages: "Olog at https://…", "the simulator's logbook (…)". */
  readonly where: string;
  /** The id of the entry already posted for `draftId`, if the logbook holds one. */
  find(draftId: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Posts the entry; throws a one-line Error when the logbook is down or refuses it. */
  post(entry: LogbookEntry, signal?: AbortSignal): Promise<PostedEntry>;
}

/** The property (Olog) or field (files) holding an entry's draft id. */
export const DRAFT_PROPERTY = "AccelAgent";
export const DRAFT_ATTRIBUTE = "draft";

/** The logbook may have taken the entry, but did not say so (a lost or unreadable reply). */
export class UncertainPostError extends Error {
  override name = "UncertainPostError";
}
