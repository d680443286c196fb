/** The conformance suite on the embedded simulator. */
import { ManualClock } from "../../../src/adapters/clock.ts";
import { createSimulator } from "../../../src/adapters/simulator/mod.ts";
import { conformance } from "../conformance.ts";
import { DAY, iso, T0 } from "./helpers.ts";

conformance("simulator", () => {
  const cs = createSimulator({ seed: 1, clock: new ManualClock(T0) });
  return Promise.resolve({
    cs,
    readable: ["LINAC:BPM:01:X", "RF:PHASE:SETPT", "DIAG:ENERGY:MEAS"],
    broken: "LINAC:BPM:01:Z",
    writable: { device: "RF:PHASE:SETPT", values: [1.5, 2.5] },
    readOnly: "LINAC:BPM:01:X",
    search: { pattern: "LINAC:BPM:*:X", min: 5 },
    logs: { from: iso(T0 - 2 * DAY), to: iso(T0) },
    [Symbol.asyncDispose]: () => Promise.resolve(),
  });
});
