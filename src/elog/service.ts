/**
 * Logbook drafts for one process: a draft for every plan that reached the
 * machine (made from the executor's results when its run ends, and saved at
 * once, so a killed session still leaves it), the question and the model's
 * summary added once the turn ends, the operator's edit, and the post or
 * skip (see `post.ts`). Nothing is posted unless a caller says so.
 *
 * @module
 */
import type { FinishedRun } from "../plan/service.ts";
import { errorMessage } from "../util/errors.ts";
import { attachmentDigests } from "./attachments.ts";
import type { Draft } from "./draft.ts";
import { type PlanFacts, planFacts } from "./plan_facts.ts";
import { planBody, planTitle } from "./plan_body.ts";
import { type PostDeps, postDraft, type PostResult, skipDraft } from "./post.ts";
import { shiftBody, type ShiftFacts, shiftTitle } from "./shift.ts";
import { capped } from "./text.ts";
import { tableProblem } from "./table_check.ts";
import { sha256Hex } from "../util/hash.ts";

export interface ElogOptions {
  logbooks: string[];
  tags: string[];
  level: string;
  problemLevel: string;
  maxChars: number;
  summaryChars: number;
  /** Where scan files are: those of a run are attached. */
  scansDir: string;
}

/** What a caller adds to a plan's draft when its turn ends. */
export interface DraftNotes {
  question?: string;
  modelSummary?: string;
  /** More files to attach (plots of the scan); checked again when posted. */
  attach?: string[];
}

export class ElogService {
  /** Drafts made in this process and not yet handed to a caller. */
  #fresh: string[] = [];
  /** The facts of drafts made here, so notes can be added to the text. */
  #facts = new Map<string, PlanFacts>();
  /** Drafts that could not be saved (a full disk): kept here, never posted. */
  #unsaved = new Map<string, { draft: Draft; error: string }>();
  /** What went wrong making or saving drafts, not yet said. */
  #problems: string[] = [];

  constructor(readonly deps: PostDeps, readonly opts: ElogOptions) {}

  get where(): string {
    return this.deps.logbook.where;
  }

  /** Makes and saves the draft of a finished run. Never throws. */
  async planFinished(run: FinishedRun): Promise<void> {
    try {
      const facts = planFacts(run);
      const id = crypto.randomUUID();
      const attachments = facts.csvFiles.filter((f) => f.startsWith(`${this.opts.scansDir}/`));
      const body = planBody(facts, this.#annotations(attachments));
      const draft: Draft = {
        version: 1,
        id,
        kind: "plan",
        created_at: new Date(this.deps.now()).toISOString(),
        status: "pending",
        title: planTitle(facts),
        body,
        made_sha256: await sha256Hex(body),
        level: facts.outcome === "completed" ? this.opts.level : this.opts.problemLevel,
        logbooks: this.opts.logbooks,
        tags: this.opts.tags,
        devices: facts.writes.map((w) => w.device),
        attachments,
        attachment_sha256: await this.#digests(attachments),
        author: this.deps.identity.operator,
        plan_hash: facts.planHash,
        run: facts.run,
        audit_ids: facts.auditIds,
        edited: false,
        facts,
        attempts: 0,
      };
      this.#facts.set(id, facts);
      this.#fresh.push(id);
      await this.#save(draft);
    } catch (e) {
      // A bug here must not change what the plan did; say it where drafts are shown.
      this.#problems.push(`no logbook draft was made: ${errorMessage(e)}`);
    }
  }

  /** Drafts made since the last call, oldest first. */
  takeNew(): string[] {
    return this.#fresh.splice(0);
  }

  /** Why drafts of this process could not be made or saved (each said once). */
  takeProblems(): string[] {
    return this.#problems.splice(0);
  }

  async load(id: string): Promise<Draft> {
    return this.#unsaved.get(id)?.draft ?? await this.deps.store.load(id);
  }

  /** Adds the question, the model's summary and plots to a draft made here (its text is redone unless edited). */
  async annotate(id: string, notes: DraftNotes): Promise<Draft> {
    const d = await this.load(id);
    const facts = this.#facts.get(id);
    const attachments = [...new Set([...d.attachments, ...(notes.attach ?? [])])].slice(0, 20);
    // Kept as long as the text shows them: a megabyte from the model stays out of the file.
    const question = notes.question ? capped(notes.question, 10_000) : undefined;
    const summary = notes.modelSummary?.trim()
      ? capped(notes.modelSummary, this.opts.summaryChars)
      : undefined;
    const known = d.attachment_sha256 ?? {};
    const added = attachments.filter((p) => !(p in known));
    const next: Draft = {
      ...d,
      attachments,
      attachment_sha256: { ...known, ...await this.#digests(added) },
      ...(question ? { question } : {}),
      ...(summary ? { model_summary: summary } : {}),
    };
    if (facts && !d.edited && d.status === "pending") {
      next.body = planBody(facts, {
        ...this.#annotations(attachments),
        question,
        modelSummary: summary,
      });
      next.made_sha256 = await sha256Hex(next.body);
    }
    await this.#save(next);
    return next;
  }

  /**
   * Replaces a pending draft's text with the operator's edit, under the
   * draft's lock (a post in another process is not overwritten).
   */
  async edit(id: string, body: string): Promise<Draft> {
    if (this.#unsaved.has(id)) return await this.#edit(id, body);
    return await this.deps.store.locked(id, () => this.#edit(id, body));
  }

  async #edit(id: string, body: string): Promise<Draft> {
    const d = await this.load(id);
    if (d.status === "posted") throw new Error(`draft ${id} is posted already; it cannot change`);
    if (d.status === "posting") {
      throw new Error(
        `a post of draft ${id} may have reached ${this.where}; post it again to find out ` +
          "before changing it; the draft is left as it was",
      );
    }
    if (!body.trim()) throw new Error("the edited text is empty; the draft is left as it was");
    if (body.length > this.opts.maxChars) {
      throw new Error(
        `the edited text has ${body.length} characters, more than [elog] max_chars ` +
          `(${this.opts.maxChars}); the draft is left as it was`,
      );
    }
    // The numbers are the audit's: an edit that changes the devices table is not taken.
    const problem = await tableProblem(this.deps.audit, { ...d, body });
    if (problem) throw new Error(`${problem}; the draft is left as it was`);
    const next: Draft = { ...d, body, edited: true };
    await this.#save(next);
    return next;
  }

  /** Makes and saves a shift summary's draft. */
  async shift(facts: ShiftFacts, prose?: string): Promise<Draft> {
    const body = shiftBody(facts, {
      prose: prose?.trim() ? capped(prose, this.opts.summaryChars) : undefined,
      maxChars: this.opts.maxChars,
      summaryChars: this.opts.summaryChars,
    });
    const draft: Draft = {
      version: 1,
      id: crypto.randomUUID(),
      kind: "shift",
      created_at: new Date(this.deps.now()).toISOString(),
      status: "pending",
      title: shiftTitle(facts),
      body,
      made_sha256: await sha256Hex(body),
      level: this.opts.level,
      logbooks: this.opts.logbooks,
      tags: this.opts.tags,
      devices: [],
      attachments: [],
      author: this.deps.identity.operator,
      audit_ids: [],
      ...(prose?.trim() ? { model_summary: capped(prose, this.opts.summaryChars) } : {}),
      edited: false,
      facts,
      attempts: 0,
    };
    await this.deps.store.save(draft);
    return draft;
  }

  /**
   * Posts draft `id` exactly once (see `post.ts`). A draft that could not be
   * saved is not posted: without the attempt on disk, a lost reply could
   * make it twice.
   */
  async post(id: string, decidedBy: string, signal?: AbortSignal): Promise<PostResult> {
    const unsaved = this.#unsaved.get(id);
    if (unsaved) {
      try {
        await this.deps.store.save(unsaved.draft);
        this.#unsaved.delete(id);
      } catch (e) {
        return {
          status: "kept",
          draft: unsaved.draft,
          error: `${errorMessage(e)}; it is not posted, so that it can never be posted twice`,
        };
      }
    }
    return await postDraft(this.deps, id, decidedBy, signal);
  }

  async skip(id: string, decidedBy: string, signal?: AbortSignal) {
    const unsaved = this.#unsaved.get(id);
    if (unsaved) {
      this.#unsaved.delete(id);
      return { draft: { ...unsaved.draft, status: "skipped" as const }, unsavedSkip: true };
    }
    return await skipDraft(this.deps, id, decidedBy, signal);
  }

  path(id: string): string {
    return this.deps.store.path(id);
  }

  #annotations(attachments: string[]) {
    return {
      maxChars: this.opts.maxChars,
      summaryChars: this.opts.summaryChars,
      operator: this.deps.identity.operator,
      host: this.deps.identity.host,
      attachments,
    };
  }

  async #digests(paths: string[]): Promise<Record<string, string>> {
    const d = this.deps;
    return await attachmentDigests(paths, d.attachmentRoots, d.attachmentMaxBytes);
  }

  async #save(d: Draft): Promise<void> {
    try {
      await this.deps.store.save(d);
      this.#unsaved.delete(d.id);
    } catch (e) {
      const error = errorMessage(e);
      this.#unsaved.set(d.id, { draft: d, error });
      this.#problems.push(`${error}; the draft is kept in this session only`);
    }
  }
}
