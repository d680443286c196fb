import assert from "node:assert/strict";
import {
  channelProperties,
  simulatorIndexSource,
} from "../../../src/adapters/simulator/index_source.ts";
import { defaultFacility } from "../../../src/facility/facility.ts";
import { createSimulator } from "../../../src/adapters/simulator/mod.ts";
import { buildIndex } from "../../../src/index/mod.ts";
import { loadSynonyms } from "../../../src/index/synonyms.ts";
import type { IndexSource } from "../../../src/index/record.ts";

Deno.test("ChannelFinder-style properties are read from any name in the convention and its description", () => {
  assert.deepEqual(
    channelProperties(
      "RING:COR:H07:SETPT",
      "Storage ring horizontal corrector H07 (cell 04) kick setpoint",
      "mrad",
      true,
    ),
    {
      section: "RING",
      family: "COR",
      device: "H07",
      index: "7",
      plane: "H",
      signal: "SETPT",
      kind: "setpoint",
      cell: "4",
      units: "mrad",
    },
  );
  assert.deepEqual(
    channelProperties(
      "SR:VAC:IP:0123:PRES",
      "Storage ring ion pump 0123 (cell 016) pressure",
      "mbar",
      false,
    ),
    {
      section: "SR",
      family: "VAC:IP",
      device: "0123",
      index: "123",
      signal: "PRES",
      kind: "measurement",
      cell: "16",
      units: "mbar",
    },
  );
  assert.equal(channelProperties("RING:BPM:11:TBT:Y", "", "mm", false).kind, "waveform");
  assert.equal(channelProperties("LINAC:QUAD:01:RDBK", "", "A", false).kind, "readback");
  assert.equal(
    channelProperties("MACHINE:MODE", "Machine operating mode", "", false).family,
    "MODE",
  );
});

Deno.test("the simulator's search answers from the index it is given, not a second one", async () => {
  const facility = defaultFacility();
  const linacOnly: IndexSource = {
    id: "linac-only",
    async *records(signal) {
      for await (const page of simulatorIndexSource(facility).records(signal)) {
        yield page.filter((r) => r.name.startsWith("LINAC:"));
      }
    },
  };
  const index = await buildIndex(linacOnly, await loadSynonyms());
  let asked = 0;
  const sim = createSimulator({
    index: () => {
      asked++;
      return Promise.resolve(index);
    },
  });
  const page = await sim.search({ pattern: "*", limit: 5 });
  assert.equal(asked, 1);
  assert.equal(page.total, facility.devices.filter((d) => d.name.startsWith("LINAC:")).length);
  assert.equal(page.devices[0]?.device, "LINAC:BLM:01:LOSS");
  assert.equal(page.devices[0]?.units, "cts/s");
});
