/**
 * A logbook draft in the terminal: shown (through the untrusted-text
 * renderer), then post / edit / skip. Edit opens the editor on the text and
 * shows the result again; Ctrl-C or Esc keeps the draft for a later
 * `accel-agent elog post`. Also the one-line reports of a post or a skip
 * that scripts and the REPL print.
 *
 * @module
 */
import type { Io } from "../../app/io.ts";
import type { Draft, ElogService, PostResult } from "../../elog/mod.ts";
import { untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";
import { style } from "./style.ts";
import { bytesText, readRegularText } from "../../util/bounded_read.ts";

/** Lines of a draft's text shown before the prompt; `elog show` prints all of it. */
const SHOWN_LINES = 40;

type Choice = "post" | "edit" | "skip";

/** What became of a draft reviewed in the terminal. */
export type Reviewed = "posted" | "skipped" | "kept";

/** The draft as the terminal shows it: where it goes, title, text (cut at `lines`). */
export function draftText(d: Draft, where: string, io: Io, lines = SHOWN_LINES): string {
  const s = style(io.color);
  const body = untrusted(d.body.trimEnd(), { multiline: true }).split("\n");
  const shown = body.slice(0, lines);
  const more = body.length - shown.length;
  return `${s.bold(`logbook draft ${d.id.slice(0, 8)}`)} ${s.dim(`→ ${untrusted(where)}`)}\n` +
    `${s.bold(untrusted(d.title))}\n${shown.map((l) => `  ${l}`).join("\n")}\n` +
    (more > 0 ? s.dim(`  … ${more} more lines (accel-agent elog show ${d.id.slice(0, 8)})\n`) : "");
}

/** One line (and one per attachment left out) saying what a post did. */
export function postText(r: PostResult, io: Io): string {
  const s = style(io.color);
  const id = r.draft.id;
  if (r.status === "kept") {
    return `${s.red("✗")} logbook entry not posted: ${untrusted(r.error)}; the draft is kept: ` +
      `accel-agent elog post ${id}\n`;
  }
  const head = r.unconfirmed !== undefined
    ? `posted to ${untrusted(r.where)} as entry ${untrusted(r.entryId)}, as the draft records it ` +
      `(the logbook could not be asked: ${untrusted(r.unconfirmed)}); nothing was sent again`
    : `${r.already ? "already in" : "posted to"} ${untrusted(r.where)} as entry ${
      untrusted(r.entryId)
    }${r.already ? " (nothing was sent again)" : ""}`;
  const lines = [
    `${s.green("✓")} ${head}`,
    ...r.refused.map((x) => `  ${s.yellow("!")} ${untrusted(x)}`),
    ...(r.auditError ? [`  ${s.red("!")} ${untrusted(r.auditError)}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** One line saying a draft was skipped (or was posted already). */
export function skipText(
  r: { draft: Draft; postedAs?: string; auditError?: string },
  io: Io,
): string {
  const s = style(io.color);
  if (r.postedAs) {
    return `${s.yellow("!")} draft ${r.draft.id} is in the logbook already as entry ${
      untrusted(r.postedAs)
    }; it was not skipped\n`;
  }
  return `${s.dim("–")} logbook draft ${r.draft.id.slice(0, 8)} skipped${
    r.auditError ? `; ${untrusted(r.auditError)}` : " (recorded in the audit)"
  }\n`;
}

/**
 * Shows draft `id` and asks post / edit / skip until one is done or the
 * prompt is left (the draft is then kept).
 */
export async function reviewDraft(
  elog: ElogService,
  id: string,
  io: Io,
  opts: { editor: string[]; decidedBy: string; signal?: AbortSignal },
): Promise<Reviewed> {
  const { default: select } = await import("@inquirer/select");
  const s = style(io.color);
  for (;;) {
    const d = await elog.load(id);
    io.out(`\n${draftText(d, elog.where, io)}`);
    let choice: Choice;
    try {
      choice = await select<Choice>({
        message: "Logbook entry:",
        default: "post",
        choices: [
          { name: `post: send it to ${untrusted(elog.where)}`, value: "post" },
          { name: "edit: change the text in the editor", value: "edit" },
          { name: "skip: no entry (recorded in the audit)", value: "skip" },
        ],
      }, { signal: opts.signal });
    } catch (e) {
      if (e instanceof Error && /Exit|Abort/.test(e.name)) {
        io.out(s.dim(`  draft kept: accel-agent elog post ${id}\n`));
        return "kept";
      }
      throw e;
    }
    if (choice === "post") {
      const r = await elog.post(id, opts.decidedBy, opts.signal);
      io.out(postText(r, io));
      return r.status === "posted" ? "posted" : "kept";
    }
    if (choice === "skip") {
      io.out(skipText(await elog.skip(id, opts.decidedBy, opts.signal), io));
      return "skipped";
    }
    try {
      const edited = await editText(opts.editor, d, elog.path(id), elog.opts.maxChars);
      if (edited !== undefined) await elog.edit(id, edited);
      else io.out(s.dim("  the text is unchanged\n"));
    } catch (e) {
      io.err(`${s.red("✗")} ${untrusted(errorMessage(e))}\n`);
    }
  }
}

/**
 * Opens the editor on the draft's text in a private file beside the draft;
 * the new text, or undefined when it did not change.
 */
async function editText(
  editor: string[],
  d: Draft,
  draftPath: string,
  maxChars: number,
): Promise<string | undefined> {
  const file = draftPath.replace(/\.json$/, ".edit.md");
  // A new file: whatever is at its name (a link left there) is removed, never written through.
  await Deno.remove(file).catch(() => {});
  await Deno.writeTextFile(file, d.body, { createNew: true, mode: 0o600 });
  try {
    const [program, ...args] = editor;
    let status: Deno.CommandStatus;
    try {
      status = await new Deno.Command(program as string, {
        args: [...args, file],
        stdin: "inherit",
        stdout: "inherit",
        stderr: "inherit",
      }).spawn().status;
    } catch (e) {
      throw new Error(
        `cannot start the editor ${program} (${errorMessage(e).split("\n")[0]}); set [elog] ` +
          "editor to an installed program (the launcher grants the one it names); the draft is " +
          "left as it was",
      );
    }
    if (!status.success) {
      throw new Error(
        `the editor ${program} exited with ${status.code}; the draft is left as it was`,
      );
    }
    // Characters are at most 4 bytes: a longer file is refused without reading it all.
    const text = await readRegularText(file, maxChars * 4).catch((e) => {
      throw new Error(
        `${errorMessage(e)} (at most ${bytesText(maxChars * 4)}); the draft is left as it was`,
      );
    });
    return text === d.body ? undefined : text;
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}
