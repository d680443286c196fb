/**
 * The files an operator names on the command line (`plan show FILE`,
 * `plan run FILE`, `audit verify FILE`, `exec FILE`): the launcher grants
 * reading exactly these, beside what the configuration names.
 *
 * @module
 */

/** Commands that name a file; the parser is loaded only for them (the launcher starts every run). */
const NAMING = new Set(["plan", "audit", "exec"]);

/** The files the arguments name (none for a saved plan's ID, stdin or arguments that do not parse). */
export async function commandFiles(args: string[]): Promise<string[]> {
  if (!args.some((a) => NAMING.has(a))) return [];
  const { parseInvocation } = await import("./args.ts");
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
