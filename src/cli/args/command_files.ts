/**
 * The files an operator names on the command line (`plan show FILE`,
 * `plan run FILE`, `audit verify FILE`, `exec FILE`): the launcher grants
 * reading exactly these, beside what the configuration names.
 *
 * @module
 */

/** The files the arguments name (none for a saved plan's ID, stdin or arguments that do not parse). */
export async function commandFiles(args: string[]): Promise<string[]> {
  const evaluation = await evalFiles(args);
  if (evaluation) return evaluation.read;
  // The table says which commands name files; the parser is loaded only for them.
  const { COMMANDS } = await import("./commands_table.ts");
  if (!args.some((a) => COMMANDS.some((c) => c.files && c.name === a))) return [];
  const { parseInvocation } = await import("./args.ts");
  let inv;
  try {
    inv = parseInvocation(args, false);
  } catch {
    return [];
  }
  const command = inv.command;
  return COMMANDS.flatMap((c) => c.files?.(command) ?? []);
}

/** The file `eval --out FILE` writes and its `FILE.tmp`, granted for writing (none for other commands). */
export async function commandWrites(args: string[]): Promise<string[]> {
  return (await evalFiles(args))?.write ?? [];
}

/**
 * What `eval` reads beyond the configuration (`--tasks-dir DIR`…, the two
 * records of `eval compare A B`) and writes (`--out FILE`); undefined for
 * other commands.
 */
async function evalFiles(args: string[]): Promise<{ read: string[]; write: string[] } | undefined> {
  if (!args.includes("eval")) return undefined;
  const { evalArgs } = await import("./eval_args.ts");
  const rest = evalArgs(args);
  if (rest === undefined) return undefined;
  const read: string[] = [];
  const write: string[] = [];
  const positionals: string[] = [];
  const VALUED = new Set([
    "--config",
    "-c",
    "--model",
    "-m",
    "--repeat",
    "--tasks",
    "--concurrency",
  ]);
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    const [flag, inline] = a.startsWith("--") && a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = () => inline ?? rest[++i];
    if (flag === "--tasks-dir") {
      const v = value();
      if (v !== undefined) read.push(v);
    } else if (flag === "--out") {
      const v = value();
      // Written whole through `<file>.tmp` beside it, then renamed (a rename reads the source).
      if (v !== undefined) {
        write.push(v, `${v}.tmp`);
        read.push(`${v}.tmp`);
      }
    } else if (VALUED.has(flag)) {
      if (inline === undefined) i++;
    } else if (!a.startsWith("-")) positionals.push(a);
  }
  if (positionals[0] === "compare") read.push(...positionals.slice(1, 3));
  return { read, write };
}
