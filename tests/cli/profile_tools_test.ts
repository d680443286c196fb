/** What each profile offers the operator's agent, from the tools actually registered. */
import assert from "node:assert/strict";
import { createApp } from "../../src/app/app.ts";
import { captureIo } from "../support/capture_io.ts";
import { tempConfig } from "../support/run_agent.ts";
import { fileTempDir } from "../support/temp.ts";

const io = captureIo({ HOME: fileTempDir() });

for (
  const [profile, offered, withheld] of [
    ["operator", ["propose_plan", "execute_code", "run_script", "list_scripts"], []],
    ["observer", ["get_parameter", "list_scripts"], ["propose_plan", "execute_code", "run_script"]],
  ] as const
) {
  Deno.test(`the ${profile} profile offers ${offered.join(", ")}${withheld.length ? ` and not ${withheld.join(", ")}` : ""}`, async () => {
    await using config = await tempConfig("");
    const app = await createApp({ config: config.path, profile }, io);
    try {
      const names = app.tools.names();
      for (const t of offered) assert.ok(names.includes(t), `${t} in ${names}`);
      for (const t of withheld) assert.ok(!names.includes(t), `${t} not in ${names}`);
    } finally {
      await app.close();
    }
  });
}
