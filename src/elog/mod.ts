/**
 * Logbook entries of the machine's changes: a draft from every plan that
 * reached the machine (`service.ts`), shift summaries (`shift.ts`), drafts
 * on disk (`store.ts`) and posting them exactly once (`post.ts`).
 *
 * @module
 */
export { type DraftNotes, type ElogOptions, ElogService } from "./service.ts";
export { type Draft, type DraftJson, draftJson } from "./draft.ts";
export { DraftError, DraftSaveError, DraftStore, readDraft } from "./store.ts";
export type { PostDeps, PostResult } from "./post.ts";
export { type ShiftFacts, shiftFacts } from "./shift.ts";
