/**
 * `deno run --allow-env early_prompt_hold.ts`: the early prompt as
 * `cli/main.ts` draws it, over a load that never ends (as if the session
 * took for ever to start), so that a signal sent while it shows is sure to
 * meet the early prompt and not the session's own.
 *
 * @module
 */
import { denoIo } from "../../src/app/io.ts";
import { earlyPrompt } from "../../src/cli/repl/early_prompt.ts";

if (!earlyPrompt({ color: "never", modelReady: true }, denoIo({ noColor: true }))) {
  console.error("early_prompt_hold: no prompt drawn (stdin and stdout must be a terminal)");
  Deno.exit(1);
}
// Loading, for ever.
setInterval(() => {}, 60_000);
