/**
 * The `[elog]` table: where a logbook entry goes and what it carries. The
 * logbook itself follows the facility: Olog (`[epics] olog_url`, with the
 * credentials `[epics] username_env`/`password_env` name), the simulator's
 * own logbook, or a local file under the state directory.
 *
 * @module
 */
import { z } from "zod";

/** An Olog name (logbook, tag, level): one printable line. */
const name = z.string().min(1).max(100).regex(/^[^\p{Cc}\p{Cf}]+$/u, {
  message: "holds a control or invisible character",
});

export const ElogConfigSchema = z.strictObject({
  /** Logbooks an entry is filed in (they must exist in Olog). */
  logbooks: z.array(name).min(1).max(20).default(["Operations"]),
  /** Tags every entry carries (they must exist in Olog). */
  tags: z.array(name).max(20).default([]),
  /** The level of completed plans and shift summaries. */
  level: name.default("Info"),
  /** The level of failed and aborted plans. */
  problem_level: name.default("Problem"),
  /** An entry's text is at most this long (characters); a longer edit is refused. */
  max_chars: z.int().min(2000).max(1_000_000).default(32_000),
  /** The model's summary is cut to this many characters. */
  summary_chars: z.int().min(0).max(20_000).default(2000),
  /** One attachment is at most this many bytes; a larger one is left out, with a note. */
  attachment_max_bytes: z.int().min(1024).max(256 * 1024 * 1024).default(16 * 1024 * 1024),
  /**
   * The editor of `edit` (argv, no shell); empty: `$VISUAL`, else `$EDITOR`. The launcher grants
   * that program; a compiled executable's baked grants hold only this one.
   */
  editor: z.array(z.string().min(1)).default([]),
}).prefault({});

export type ElogConfig = z.infer<typeof ElogConfigSchema>;
