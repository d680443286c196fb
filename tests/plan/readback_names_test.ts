/**
 * A readback is read under the name the control system reads: a partner
 * the catalogue spells its own way is read by its canonical name, one the
 * control system would resolve elsewhere cannot confirm, and the setpoint
 * under another name never confirms itself.
 */
import assert from "node:assert/strict";
import type { ControlReader, DeviceInfo, Reading } from "../../src/adapters/adapter.ts";
import { namingFor } from "../../src/adapters/device_names.ts";
import { findReadbacks } from "../../src/plan/readback.ts";

/** A reader where every name reads 1, recording what it was asked. */
function reader(kind: string): ControlReader & { asked: string[] } {
  const asked: string[] = [];
  const no = () => Promise.reject(new Error("not used"));
  return {
    kind,
    asked,
    read: (names: string[]) => {
      asked.push(...names);
      return Promise.resolve(names.map((device): Reading => ({
        device,
        value: 1,
        units: "",
        timestamp: "2026-01-01T00:00:00Z",
        severity: "NONE",
        status: "NO_ALARM",
        ok: true,
      })));
    },
    describe: no,
    search: no,
    logs: no,
    archive: no,
  };
}

const info = (device: string, readback?: string): DeviceInfo => ({
  device,
  exists: true,
  description: "",
  units: "A",
  writable: true,
  type: "number",
  subsystem: "SR",
  ...(readback ? { readback } : {}),
});

Deno.test("a catalogue partner that is the setpoint by its .VAL, or a prefixed alias, cannot confirm", async () => {
  const cs = reader("epics");
  const found = await findReadbacks(
    cs,
    [
      { info: info("SR:PS:1:SETPT", "SR:PS:1:SETPT.VAL"), limit: undefined },
      { info: info("SR:PS:2:SETPT", "pva://SR:PS:2:RDBK"), limit: undefined },
      { info: info("SR:PS:3:SETPT", "SR:PS:3:RDBK.VAL"), limit: undefined },
    ],
    1000,
    undefined,
    namingFor("epics"),
  );
  assert.match(
    found.problems["SR:PS:1:SETPT"] ?? "",
    /the device catalogue names for SR:PS:1:SETPT cannot stand: SR:PS:1:SETPT is SR:PS:1:SETPT itself: reading a setpoint back confirms nothing/,
  );
  assert.match(
    found.problems["SR:PS:2:SETPT"] ?? "",
    /cannot stand: .*the protocol prefix "pva:\/\/"/,
  );
  // The same channel by its one name: read as SR:PS:3:RDBK, and it confirms.
  assert.equal(found.partners["SR:PS:3:SETPT"]?.device, "SR:PS:3:RDBK");
  assert.deepEqual(cs.asked, ["SR:PS:3:RDBK"]);
});

Deno.test("a TANGO catalogue partner in the server's letter case is read by its canonical name", async () => {
  const cs = reader("tango");
  const found = await findReadbacks(
    cs,
    [{ info: info("sr/ps/q1/current_sp", "sr/ps/q1/Current_RB"), limit: undefined }],
    1000,
    undefined,
    namingFor("tango"),
  );
  assert.deepEqual(found.problems, {});
  assert.equal(found.partners["sr/ps/q1/current_sp"]?.device, "sr/ps/q1/current_rb");
});
