/**
 * `elog list|show|post|skip|shift` and the `--elog post|skip` choice of
 * `plan run` and `elog shift`: arguments as a {@link Command}.
 *
 * @module
 */
import { UsageError } from "../../app/exit.ts";
import type { Command } from "./command.ts";
import { str, type Values } from "./table.ts";

/** What to do with a logbook draft without asking: post it, skip it, or (undefined) ask or keep it. */
export function elogChoice(v: Values): "post" | "skip" | undefined {
  const choice = str(v, "elog");
  if (choice === undefined || choice === "post" || choice === "skip") return choice;
  throw new UsageError(`--elog "${choice}" must be post or skip`);
}

/** `elog …`: its arguments and flags as a command. */
export function elogCommand(rest: string[], v: Values): Command {
  const [action, ...drafts] = rest;
  const choice = elogChoice(v);
  const from = str(v, "from"), to = str(v, "to");
  if (action !== "shift" && (choice !== undefined || from !== undefined || to !== undefined)) {
    throw new UsageError("--elog, --from and --to go with elog shift");
  }
  switch (action) {
    case "list":
      if (drafts.length) throw new UsageError("elog list takes no arguments");
      return { kind: "elog", action: "list", drafts: [] };
    case "show":
      if (drafts.length !== 1) throw new UsageError("elog show needs one draft id or file");
      return { kind: "elog", action: "show", drafts };
    case "post":
    case "skip":
      if (!drafts.length) {
        throw new UsageError(
          `elog ${action} needs a draft id or file, e.g. accel-agent elog ${action} 3f2a9c1e; ` +
            "accel-agent elog list shows them",
        );
      }
      return { kind: "elog", action, drafts };
    case "shift":
      if (drafts.length) throw new UsageError("elog shift takes no arguments but --from and --to");
      return {
        kind: "elog",
        action: "shift",
        drafts: [],
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(choice ? { choice } : {}),
      };
    default:
      throw new UsageError(
        "elog needs list, show, post, skip or shift, e.g. accel-agent elog post DRAFT",
      );
  }
}

/** The draft files a command line names (a reference with a / or ending in .json). */
export function elogFiles(cmd: Command): string[] {
  if (cmd.kind !== "elog") return [];
  return cmd.drafts.filter((d) => d.includes("/") || d.endsWith(".json"));
}
