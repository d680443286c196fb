/**
 * `accel-agent elog list|show|post|skip|shift`: the logbook drafts kept in
 * the state directory, posted exactly once or skipped (the audit records
 * which), and the shift summary, drafted from the logbook, alarms and plans
 * (numbers from the services; the model, when one is configured, only for
 * prose). Every draft text is shown through the untrusted-text renderer.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import { abortOnSignals, cancelledBy, type Io } from "../../app/io.ts";
import type { Command } from "../args/command.ts";
import {
  type Draft,
  DraftError,
  draftJson,
  DraftSaveError,
  readDraft,
  type ShiftFacts,
  shiftFacts,
} from "../../elog/mod.ts";
import { fail } from "./fail.ts";
import { resolveRange } from "../../util/time_range.ts";
import { errorMessage } from "../../util/errors.ts";
import { timeoutSignal } from "../../util/misc.ts";
import { isRefusal } from "../../util/bounded_read.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { draftText, postText, skipText } from "../term/elog_review.ts";
import { settleDrafts } from "../term/elog_after.ts";
import { style } from "../term/style.ts";

type ElogCommand = Extract<Command, { kind: "elog" }>;

export async function runElog(app: App, cmd: ElogCommand, json: boolean, io: Io): Promise<number> {
  try {
    switch (cmd.action) {
      case "list":
        return await list(app, json, io);
      case "show":
        return await show(app, cmd.drafts[0] as string, json, io);
      case "post":
      case "skip":
        return await postOrSkip(app, cmd.action, cmd.drafts, json, io);
      case "shift":
        return await shift(app, cmd, json, io);
    }
  } catch (e) {
    if (e instanceof DraftError) throw new CliError(e.message, Exit.USAGE);
    // A lock file that is no regular file (a FIFO put in its place): one line naming it.
    if (isRefusal(e)) throw new CliError(e.message, Exit.FAILURE);
    throw e;
  }
}

async function list(app: App, json: boolean, io: Io): Promise<number> {
  const elog = await app.plans.elog();
  const all = await elog.deps.store.list();
  if (json) {
    io.out(`${
      terminalJson({
        logbook: elog.where,
        drafts: all.map((x) =>
          x.draft ? draftJson(x.draft, x.path) : { id: x.id, path: x.path, error: x.error }
        ),
      })
    }\n`);
    return Exit.OK;
  }
  const s = style(io.color);
  if (!all.length) io.out(`no logbook drafts (${untrusted(elog.where)})\n`);
  for (const x of all) {
    if (!x.draft) {
      io.out(`  ${x.id.slice(0, 8)}  ${s.red("damaged")}  ${untrusted(x.error ?? "")}\n`);
      continue;
    }
    const d = x.draft;
    const state = d.status === "posted"
      ? s.green(`posted ${untrusted(d.entry?.id ?? "")}`)
      : d.status === "skipped"
      ? s.dim("skipped")
      : s.yellow(d.status === "posting" ? "pending (a post may have reached it)" : "pending");
    io.out(
      `  ${d.id.slice(0, 8)}  ${d.created_at.slice(0, 16)}  ${state}  ${untrusted(d.title)}\n`,
    );
  }
  return Exit.OK;
}

async function show(app: App, ref: string, json: boolean, io: Io): Promise<number> {
  const elog = await app.plans.elog();
  // A file is shown as it is, not taken into the drafts (posting it does that).
  const file = ref.includes("/") || ref.endsWith(".json");
  const d = file ? await readDraft(ref) : await elog.load(await elog.deps.store.resolve(ref));
  if (json) io.out(`${terminalJson(draftJson(d, file ? ref : elog.path(d.id)))}\n`);
  else io.out(draftText(d, elog.where, io, Infinity));
  return Exit.OK;
}

async function postOrSkip(
  app: App,
  action: "post" | "skip",
  refs: string[],
  json: boolean,
  io: Io,
): Promise<number> {
  const elog = await app.plans.elog();
  const controller = new AbortController();
  using _stop = abortOnSignals(controller, cancelledBy);
  const ids: string[] = [];
  for (const ref of refs) ids.push(await elog.deps.store.resolve(ref));
  const results = [];
  let failed = false;
  for (const id of ids) {
    if (action === "post") {
      const r = await elog.post(id, "operator: elog post", controller.signal);
      if (r.status === "kept" || r.auditError) failed = true;
      if (!json) io.out(postText(r, io));
      results.push({
        ...draftJson(r.draft, elog.path(id)),
        posted: r.status === "posted",
        ...(r.status === "posted"
          ? { entry_id: r.entryId, already: r.already, attachments_refused: r.refused }
          : { error: r.error }),
        ...(r.status === "posted" && r.auditError ? { audit_error: r.auditError } : {}),
      });
    } else {
      const r = await elog.skip(id, "operator: elog skip", controller.signal);
      if ("auditError" in r && r.auditError) failed = true;
      if (!json) io.out(skipText(r, io));
      results.push(draftJson(r.draft, elog.path(id)));
    }
  }
  if (json) io.out(`${terminalJson({ logbook: elog.where, drafts: results })}\n`);
  return failed ? Exit.FAILURE : Exit.OK;
}

async function shift(app: App, cmd: ElogCommand, json: boolean, io: Io): Promise<number> {
  const controller = new AbortController();
  using _stop = abortOnSignals(controller, cancelledBy);
  let range;
  try {
    range = resolveRange(cmd.from ?? "-8h", cmd.to, Date.now(), 8);
  } catch (e) {
    throw new CliError(errorMessage(e), Exit.USAGE);
  }
  const facts = await shiftFacts(
    app.cs,
    await app.plans.audit.files(),
    range.from,
    range.to,
    controller.signal,
  );
  const prose = await proseOf(app, facts, controller.signal, io);
  const elog = await app.plans.elog();
  let draft;
  try {
    draft = await elog.shift(facts, prose);
  } catch (e) {
    if (e instanceof DraftSaveError && e.draft) unsavedShift(e, e.draft, json, io);
    throw e;
  }
  const [report] = await settleDrafts(app, [draft], {
    choice: cmd.choice,
    ask: !json && io.stdinIsTerminal && io.stdoutIsTerminal,
    json,
    decidedBy: cmd.choice ? `elog shift --elog ${cmd.choice}` : "operator: terminal",
    signal: controller.signal,
  }, io);
  if (json) io.out(`${terminalJson(report ?? null)}\n`);
  else if (!cmd.choice && !(io.stdinIsTerminal && io.stdoutIsTerminal)) {
    io.out(draftText(draft, elog.where, io, Infinity));
  }
  return report?.error ? Exit.FAILURE : Exit.OK;
}

/** A summary that could not be saved (a full disk) is printed, not lost; then one line says so. */
function unsavedShift(e: DraftSaveError, d: Draft, json: boolean, io: Io): never {
  if (json) {
    fail(io, true, "not_saved", e.message, Exit.FAILURE, {
      draft: { title: d.title, body: d.body },
    });
  }
  io.out(`${untrusted(d.title)}\n${untrusted(d.body.trimEnd(), { multiline: true })}\n`);
  throw new CliError(`${e.message}; the summary is printed above, not saved`, Exit.FAILURE);
}

/** A few sentences of prose from the model over the numbers; none without a model. */
async function proseOf(
  app: App,
  facts: ShiftFacts,
  signal: AbortSignal,
  io: Io,
): Promise<string | undefined> {
  try {
    app.checkModel();
  } catch {
    return undefined;
  }
  // The turn's deadline bounds this call too: an endpoint that trickles its answer for ever
  // would otherwise keep the command, as every byte resets the idle timer.
  const seconds = app.loaded.config.llm.turn_timeout_s;
  const deadline = timeoutSignal(seconds * 1000);
  try {
    const model = await app.model();
    let text = "";
    for await (
      const ev of model.complete({
        messages: [
          {
            role: "system",
            content: "You write the prose of a particle accelerator's shift summary for the " +
              "logbook. Use only the numbers and entries given; add no number of your own. " +
              "Three to five plain sentences, no tables, no headings.",
          },
          { role: "user", content: JSON.stringify(facts) },
        ],
        tools: [],
      }, AbortSignal.any([signal, deadline]))
    ) {
      if (ev.type === "done") text = ev.response.text;
    }
    return text;
  } catch (e) {
    const why = deadline.aborted && !signal.aborted
      ? `it was still answering after ${seconds} s, [llm] turn_timeout_s`
      : untrusted(errorMessage(e));
    io.err(`accel-agent: the model's prose is left out (${why})\n`);
    return undefined;
  }
}
