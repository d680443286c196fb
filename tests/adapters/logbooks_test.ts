/**
 * Where entries go: Olog on an EPICS facility that has one, the simulator's
 * own logbook, and a local file for any other facility.
 *
 * @module
 */
import assert from "node:assert/strict";
import { openLogbook } from "../../src/adapters/logbooks.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

Deno.test("the logbook follows the facility: Olog, the simulator's own, or a local file", async () => {
  const config = (facility: Record<string, unknown>) => ConfigSchema.parse(facility);
  const olog = await openLogbook(
    config({
      facility: { adapter: "epics" },
      epics: { olog_url: "https://olog.example:8181/Olog/" },
    }),
    "/s",
    () => undefined,
  );
  assert.deepEqual([olog.kind, olog.where], ["olog", "Olog at https://olog.example:8181/Olog"]);
  const sim = await openLogbook(config({}), "/s");
  assert.deepEqual([sim.kind, sim.where], [
    "simulator",
    "the simulator's logbook (/s/elog/simulator.jsonl)",
  ]);
  for (const facility of [{ facility: { adapter: "epics" } }, { facility: { adapter: "tango" } }]) {
    const local = await openLogbook(config(facility), "/s");
    assert.deepEqual([local.kind, local.where], [
      "file",
      "the local logbook /s/elog/logbook.jsonl",
    ]);
  }
});
