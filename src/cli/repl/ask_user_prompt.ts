/**
 * The operator's side of `ask_user` in the REPL: the live output is paused
 * (spinner stopped, partial answer flushed), then the question is asked with
 * a line prompt, or a list when the model offered choices. The question and
 * choices are the model's text, shown through {@link untrusted}; the answer
 * picked is returned as the model wrote it. The keys typed are the prompt's
 * only: nothing of the answer is queued as steering.
 *
 * @module
 */
import type { OperatorChannel } from "../../tools/ask_user.ts";
import type { Io } from "../../app/io.ts";
import type { ClaimTerminal } from "../term/approval_prompt.ts";
import { style } from "../term/style.ts";
import { untrusted } from "../../util/untrusted_text.ts";

export class TerminalOperator implements OperatorChannel {
  constructor(readonly io: Io, readonly beforePrompt: ClaimTerminal = () => {}) {}

  async ask(question: string, choices: string[] | undefined, signal: AbortSignal): Promise<string> {
    const release = this.beforePrompt();
    try {
      return await this.#ask(question, choices, signal);
    } finally {
      release?.();
    }
  }

  async #ask(
    question: string,
    choices: string[] | undefined,
    signal: AbortSignal,
  ): Promise<string> {
    const [{ default: input }, { default: select }] = await Promise.all([
      import("@inquirer/input"),
      import("@inquirer/select"),
    ]);
    const s = style(this.io.color);
    this.io.out(
      `\n${s.bold("? The assistant asks:")} ${untrusted(question, { multiline: true })}\n`,
    );
    if (choices?.length) {
      return await select({
        message: "Your answer",
        choices: [...choices.map((c) => ({ name: untrusted(c), value: c })), {
          name: "(type another answer)",
          value: "",
        }],
      }, { signal }) || await input({ message: "Your answer" }, { signal });
    }
    return await input({ message: "Your answer" }, { signal });
  }
}
