/**
 * The real REPL in a real terminal (tmux), talking to a scripted model.
 *
 * @module
 */
import { AGENT_FLAGS, childEnv, MAIN, ROOT } from "./run_agent.ts";
import { LAUNCHER_FLAGS } from "./user_grants.ts";
import { type TerminalSize, TmuxSession } from "./tmux.ts";

export const PROMPT = /accel›\s*$/m;

/** The REPL as a user starts it (`deno task agent`): the launcher computes the grants from the config. */
export const LAUNCHED = [Deno.execPath(), "run", ...LAUNCHER_FLAGS, `${ROOT}/launch.ts`];

/** The session's own prompt, after its banner: the early prompt drawn while it loads comes first. */
export const READY = /Ask about the machine[^\n]*\n[\s\S]*accel›\s*$/m;

/**
 * Starts `main.ts` (or `argv`) with the model at `modelUrl` and `home` as
 * HOME, in a terminal of `size` (120 × 40 unless given), and returns once the session's prompt is shown (not the early one).
 */
export async function startRepl(
  modelUrl: string,
  home: string,
  argv: string[] = [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN],
  size: TerminalSize = {},
): Promise<TmuxSession> {
  const term = await TmuxSession.start(
    argv,
    childEnv({ OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: "k", HOME: home }),
    ROOT,
    size,
  );
  try {
    await term.waitFor(READY);
  } catch (e) {
    await term[Symbol.asyncDispose]();
    throw e;
  }
  return term;
}
