/**
 * Whether the command line is `eval` (after any global options), and its
 * arguments for `runEvalCommand`: kept apart from `eval_command.ts` so other
 * commands do not load the evaluation code to find out.
 *
 * @module
 */

/** Global options that take a value, as they may precede the command. */
const VALUED = new Set(["--config", "-c", "--model", "-m"]);
/** Global flags that may precede the command. */
const FLAGS = new Set(["--json", "--no-color"]);

/**
 * The arguments of `eval` (global options before it moved after it), or
 * undefined when the command is another one.
 *
 * @example
 * ```ts
 * evalArgs(["-c", "x.toml", "eval", "--repeat", "3"]); // ["--repeat", "3", "-c", "x.toml"]
 * evalArgs(["ask", "eval"]); // undefined
 * ```
 */
export function evalArgs(args: string[]): string[] | undefined {
  const before: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "eval") return [...args.slice(i + 1), ...before];
    if (VALUED.has(a) && i + 1 < args.length) {
      before.push(a, args[++i] as string);
    } else if (FLAGS.has(a) || /^--(config|model)=/.test(a)) {
      before.push(a);
    } else {
      return undefined;
    }
  }
  return undefined;
}
