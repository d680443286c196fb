/**
 * A scripted OpenAI-compatible chat-completions server for tests and benches.
 *
 * In a test:
 *
 * ```ts
 * await using llm = await startScriptedLlm({ scenario: await loadScenario("s.json") });
 * // point the agent at llm.url, run it, then:
 * assert.deepEqual(llm.failures, []);
 * assert.equal(llm.remaining(), 0);
 * ```
 *
 * As a process (prints the base URL first, exits when the scenario is consumed):
 *
 * ```sh
 * deno run --allow-net --allow-read tests/support/scripted_llm.ts SCENARIO.json [--port N] [--timeout SECONDS]
 * ```
 *
 * @module
 */

import { runCli } from "./scripted_llm_cli.ts";

export {
  type ScriptedLlm,
  type ScriptedLlmOptions,
  startScriptedLlm,
} from "./scripted_llm_server.ts";
export { loadScenario, parseScenario } from "./scripted_llm_scenario.ts";
export type * from "./scripted_llm_types.ts";
export { isFault } from "./scripted_llm_types.ts";

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
