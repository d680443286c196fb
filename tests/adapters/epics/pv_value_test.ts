/** Merged pvws updates read as the spec says: a disconnect is a disconnect whatever the PV's type. */
import assert from "node:assert/strict";
import { encodeDoubles } from "../../support/facility/fake_pvws.ts";
import { readingOf } from "../../../src/adapters/epics/pv_value.ts";
import { mergeUpdate, type PvState } from "../../../src/adapters/epics/pvws.ts";

function merged(...updates: PvState[]): PvState {
  return updates.reduce<PvState>((s, u) => mergeUpdate(s, u), {});
}

const DISCONNECT = { type: "update", pv: "X", value: "NaN", severity: "UNDEFINED" };

Deno.test("an enum whose IOC goes away reads as disconnected, not as its last label", () => {
  const s = merged(
    {
      type: "update",
      pv: "X",
      vtype: "VEnum",
      value: 1,
      text: "Open",
      labels: ["Closed", "Open"],
      severity: "NONE",
    },
    DISCONNECT,
  );
  const r = readingOf("X", s);
  assert.equal(r.ok, false);
  assert.equal(r.status, "DISCONNECTED");
});

Deno.test("a waveform whose IOC goes away reads as disconnected, and as an array again when it returns", () => {
  const first = {
    type: "update",
    pv: "X",
    vtype: "VDoubleArray",
    b64dbl: encodeDoubles([1, 2]),
    severity: "NONE",
  };
  assert.equal(readingOf("X", merged(first, DISCONNECT)).ok, false);
  const back = merged(first, DISCONNECT, {
    type: "update",
    pv: "X",
    b64dbl: encodeDoubles([3, 4]),
    severity: "NONE",
  });
  assert.deepEqual(readingOf("X", back).value, [3, 4]);
  assert.equal(readingOf("X", back).ok, true);
});

Deno.test("a string PV with no vtype that disconnects is not read as a null value", () => {
  const s = merged(
    { type: "update", pv: "X", text: "Beam for users", severity: "NONE" },
    DISCONNECT,
  );
  assert.equal(readingOf("X", s).ok, false);
});

Deno.test("metadata survives value deltas", () => {
  const s = merged(
    {
      type: "update",
      pv: "X",
      vtype: "VDouble",
      value: 1.5,
      units: "mm",
      precision: 3,
      severity: "NONE",
    },
    { type: "update", pv: "X", value: 1.7 },
  );
  const r = readingOf("X", s);
  assert.deepEqual([r.value, r.units, r.ok], [1.7, "mm", true]);
});
