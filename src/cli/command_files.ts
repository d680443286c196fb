/**
 * The files an operator names on the command line (`plan show FILE`,
 * `plan run FILE`, `audit verify FILE`, `exec FILE`): the launcher grants
 * reading exactly these, beside what the configuration names.
 *
 * @module
 */
import { parseInvocation } from "./args.ts";

/** The files the arguments name (none for a saved plan's ID, stdin or arguments that do not parse). */
export function commandFiles(args: string[]): string[] {
  let cmd;
  try {
    cmd = parseInvocation(args, false).command;
  } catch {
    return [];
  }
  switch (cmd.kind) {
    case "plan_show":
    case "plan_run":
      return [cmd.file];
    case "audit_verify":
      return cmd.file ? [cmd.file] : [];
    case "exec":
      return cmd.file === "-" ? [] : [cmd.file];
    default:
      return [];
  }
}
