/**
 * `ask_user`: a clarifying question to the operator. In the REPL it is asked
 * between the answer's output; where nobody can answer (one-shot `ask`,
 * scripts) it returns "no operator available" at once so the model can go on
 * with what it has, or stop and say what it needs.
 *
 * @module
 */
import { z } from "zod";
import { defineTool, type Tool } from "./define.ts";

/** Someone who can answer: the operator at the terminal. */
export interface OperatorChannel {
  /** Asks and resolves with the answer; rejects when `signal` aborts. */
  ask(question: string, choices: string[] | undefined, signal: AbortSignal): Promise<string>;
}

/** The note the model reads when nobody can answer. */
export const NO_OPERATOR = "no operator available";

const Parameters = z.strictObject({
  question: z.string().min(1).describe(
    "One short, specific question; say why you need the answer",
  ),
  choices: z.array(z.string().min(1)).max(10).optional().describe(
    "Answers to choose from, when the question has a few obvious ones",
  ),
});

/** What `ask_user` returns: the operator's answer, or null and why there is none. */
export type AskUserResult = { answer: string } | { answer: null; note: string };

/** The tool, asking whoever `channel()` returns at call time (none in one-shot mode). */
export function askUserTool(channel: () => OperatorChannel | undefined): Tool<AskUserResult> {
  return defineTool<typeof Parameters, AskUserResult>({
    name: "ask_user",
    description:
      "Ask the operator a clarifying question when the request is ambiguous (which device, which time " +
      "range, which of several options). Do not ask what you can find out with the other tools. " +
      `When nobody can answer, the result says "${NO_OPERATOR}": then proceed with a stated ` +
      "assumption, or stop and say what you need.",
    parameters: Parameters,
    readOnly: false,
    // The operator may take a while; the prompt itself ends on Ctrl-C.
    awaitsCompletion: true,
    async execute({ question, choices }, { signal }) {
      const operator = channel();
      if (!operator) return { answer: null, note: NO_OPERATOR };
      return { answer: await operator.ask(question, choices, signal) };
    },
  });
}
