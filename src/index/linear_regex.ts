/**
 * A regular expression over device names, run so that no expression can hold
 * the program: one with a single choice, a variable repetition or a group of
 * alternatives, and no repeated group (`^RING:(BPM|COR):0[1-5]:X$`, `SR:.*X`)
 * runs on the built-in engine, which is fast and, for such an expression,
 * bounded by the square of a name's length; any other (`(.|.)*Z`, `.*.*.*Z`,
 * `(A+)+`, `(.|.)(.|.)(.|.)…Z`) runs on RE2's linear-time engine (`re2js`,
 * loaded only when needed), a few times slower but bounded by the name's
 * length: the built-in engine backtracks through every way to split a name among the
 * repetitions and every combination of alternatives, for hours, and nothing
 * can interrupt it. A name longer than {@link LONG_NAME} is tested on the
 * linear-time engine by any expression with a repetition, counted ones too.
 *
 * @module
 */

/** What tests a name. */
export interface NameTest {
  test(name: string): boolean;
}

/**
 * How `body` repeats: the variable repetitions (`*`, `+`, `?`, `{n,}`,
 * `{n,m}`) outside character classes, whether any repetition applies to a
 * group, and how many groups (the whole expression counting as one) hold
 * alternatives (`|`): each such group is a choice the built-in engine
 * backtracks through, as a repetition is.
 */
export function repetitions(
  body: string,
): { variable: number; group: boolean; alternatives: number } {
  let variable = 0, group = false, alternatives = 0;
  /** For each open group, the whole expression first: whether it holds a `|`. */
  const open = [false];
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") {
      // `\u{…}`, `\p{…}`, `\k<…>`: the braces are the escape's, not a repetition.
      const next = body[i + 1] ?? "";
      const open = body[i + 2];
      if ("upPk".includes(next) && (open === "{" || open === "<")) {
        const close = body.indexOf(open === "{" ? "}" : ">", i + 2);
        i = close < 0 ? body.length : close;
      } else i++;
      continue;
    }
    if (c === "[") {
      for (i++; i < body.length && body[i] !== "]"; i++) if (body[i] === "\\") i++;
      continue;
    }
    if (c === "(") open.push(false);
    else if (c === "|") open[open.length - 1] = true;
    else if (c === ")" && open.length > 1 && open.pop()) alternatives++;
    const prev = body[i - 1];
    let quantifier: "variable" | "fixed" | undefined;
    if (c === "*" || c === "+") quantifier = "variable";
    else if (c === "?" && prev !== "(" && !/[*+?}]/.test(prev ?? "")) quantifier = "variable";
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(body.slice(i));
      if (m) {
        quantifier = m[2] === undefined || m[3] === m[1] ? "fixed" : "variable";
        i += m[0].length - 1;
      }
    }
    if (quantifier === undefined) continue;
    if (quantifier === "variable") variable++;
    if (prev === ")") group = true;
  }
  if (open.some((bar) => bar)) alternatives += open.filter((bar) => bar).length;
  return { variable, group, alternatives };
}

/**
 * Names longer than this are tested on the linear-time engine even by an
 * expression the built-in engine runs: for `.*Z` it takes the square of a
 * name's length (3 s for one name of 50,000 characters, hours for a few
 * million, were a name allowed so long; the index holds names up to 1,024).
 */
export const LONG_NAME = 1_000;

/**
 * An expression with a variable repetition that the linear-time engine cannot
 * run met a name longer than {@link LONG_NAME}: thrown by its test, said in words.
 */
export class UnboundedRegex extends Error {
  override name = "UnboundedRegex";
}

/**
 * The `/body/flags` of a search as a test of names. Throws a SyntaxError,
 * said in words, when it is not a regular expression, or when it needs the
 * linear-time engine and uses what that engine cannot run (backreferences,
 * lookaround).
 */
export async function nameRegex(text: string): Promise<NameTest> {
  const t = text.trim();
  const end = t.lastIndexOf("/");
  const body = t.slice(1, end);
  const flags = t.slice(end + 1).replace(/[gy]/g, "");
  const builtIn = new RegExp(body, flags === "" ? "i" : flags);
  const r = repetitions(body);
  // Without a repetition each attempt reads at most the expression's length;
  // a counted one (`.{20000}Z`) reads its count at each start, 27 s over a name of 200,000.
  const single = r.variable + r.alternatives <= 1 && !r.group;
  if (single && r.variable === 0 && !/\{\d/.test(body)) return builtIn;
  const linear = await linearRegex(body, flags);
  if (single) {
    return {
      test: (name) => {
        if (name.length <= LONG_NAME) return builtIn.test(name);
        if (linear instanceof Error) {
          throw new UnboundedRegex(
            `${text} cannot be tested against a name of ${name.length} characters in bounded ` +
              `time: the engine that never backtracks cannot run it (${linear.message}); ` +
              "backreferences and lookaround need backtracking: write it without them",
          );
        }
        return linear.test(name);
      },
    };
  }
  if (linear instanceof Error) {
    throw new SyntaxError(
      `it repeats more than once, so it is run on an engine that never backtracks, which ` +
        `cannot run it (${linear.message}); ` +
        "backreferences and lookaround need backtracking: write it without them",
    );
  }
  return linear;
}

/** `body` on RE2's linear-time engine, or why that engine cannot run it. */
async function linearRegex(body: string, flags: string): Promise<NameTest | Error> {
  const { RE2JS } = await import("re2js");
  let options = flags === "" || flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0;
  if (flags.includes("s")) options |= RE2JS.DOTALL;
  if (flags.includes("m")) options |= RE2JS.MULTILINE;
  try {
    const re = RE2JS.compile(body, options);
    return { test: (name) => re.matcher(name).find() };
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}
