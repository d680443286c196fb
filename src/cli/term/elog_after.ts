/**
 * What happens to the logbook drafts a command made: posted or skipped
 * when the command line says so (`--elog post|skip`), reviewed in the
 * terminal (post / edit / skip) when there is one to ask on, else kept on
 * disk with one line saying how to post them later. Never a prompt without
 * a terminal. Reports go to stdout, or stderr under `--json`.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { editorCommand } from "../../app/editor.ts";
import type { Io } from "../../app/io.ts";
import { type Draft, type DraftJson, draftJson, type ElogService } from "../../elog/mod.ts";
import { errorMessage } from "../../util/errors.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { postText, reviewDraft, skipText } from "./elog_review.ts";
import { style } from "./style.ts";

/** A draft and what became of it, for `--json`. */
export interface DraftReport {
  draft: DraftJson;
  /** posted, skipped, or pending (kept for `elog post`). */
  status: "posted" | "skipped" | "pending";
  entry_id?: string;
  error?: string;
}

export interface Settle {
  /** From `--elog`: post or skip without asking. */
  choice?: "post" | "skip";
  /** Ask in the terminal when no choice was given. */
  ask: boolean;
  json: boolean;
  /** Who decided, for the audit: "operator: terminal", "plan run --elog post"… */
  decidedBy: string;
  signal?: AbortSignal;
}

/** Posts, skips, reviews or keeps each draft; what became of each. */
export async function settleDrafts(
  app: App,
  drafts: Draft[],
  how: Settle,
  io: Io,
): Promise<DraftReport[]> {
  // Opened when a plan ended (or a command made a draft); otherwise nothing to say.
  const elog = app.plans.elogIfOpen() ?? (drafts.length ? await app.plans.elog() : undefined);
  if (!elog) return [];
  const say = (text: string) => (how.json ? io.err(text) : io.out(text));
  const s = style(io.color);
  for (const p of elog.takeProblems()) say(`${s.red("!")} logbook: ${untrusted(p)}\n`);
  const reports: DraftReport[] = [];
  for (const d of drafts) {
    let error: string | undefined;
    try {
      if (how.choice === "post") {
        const r = await elog.post(d.id, how.decidedBy, how.signal);
        say(postText(r, io));
        if (r.status === "kept") error = r.error;
      } else if (how.choice === "skip") {
        say(skipText(await elog.skip(d.id, how.decidedBy, how.signal), io));
      } else if (how.ask) {
        await reviewDraft(elog, d.id, io, {
          editor: editorCommand(app.loaded.config, io.env),
          decidedBy: how.decidedBy,
          signal: how.signal,
        });
      } else {
        say(
          `${s.dim("–")} logbook draft ${d.id.slice(0, 8)} kept (not posted): ` +
            `accel-agent elog post ${d.id}\n`,
        );
      }
    } catch (e) {
      error = errorMessage(e);
      say(`${s.red("✗")} logbook draft ${d.id}: ${untrusted(error)}\n`);
    }
    reports.push(await report(elog, d, error));
  }
  return reports;
}

async function report(elog: ElogService, d: Draft, error?: string): Promise<DraftReport> {
  const now = await elog.load(d.id).catch(() => d);
  const status = now.status === "posted" || now.status === "skipped" ? now.status : "pending";
  return {
    draft: draftJson(now, elog.path(now.id)),
    status,
    ...(now.entry ? { entry_id: now.entry.id } : {}),
    ...(error ? { error } : {}),
  };
}
