/**
 * A test-only entry point: what the compiled executable's sandbox role does
 * with the agent's grants (`dropAgentGrants`, as `process_main.ts` calls it
 * before the worker starts), then attempts made from inside that process.
 * Started as `deno run FLAGS role_probe.ts SETUP_JSON PROBES_JSON` with the
 * flags `deno task compile` bakes in; prints one `ROLE-PROBE {json}` line.
 *
 * @module
 */
import { dropAgentGrants } from "../../src/sandbox/role_grants.ts";
import type { ProcessSetup } from "../../src/sandbox/protocol.ts";
import { attempt, type Outcome, type Probe } from "./grant_probe.ts";

if (import.meta.main) {
  const setup = JSON.parse(Deno.args[0] ?? "{}") as ProcessSetup;
  if (!setup.agentGrants) throw new Error("the setup has no agentGrants");
  const dropped = await dropAgentGrants(setup.agentGrants, setup);
  const results: Outcome[] = [];
  for (const probe of JSON.parse(Deno.args[1] ?? "[]") as Probe[]) {
    results.push({ probe, ...await attempt(probe) });
  }
  console.log(`ROLE-PROBE ${JSON.stringify({ dropped, results })}`);
}
