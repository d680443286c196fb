/** The conformance suite on the EPICS adapter against the fake pvws, archiver, ChannelFinder, Olog and alarm logger. */
import { createEpics } from "../../../src/adapters/epics/mod.ts";
import { startFakeEpics } from "../../support/facility/fake_epics.ts";
import { conformance } from "../conformance.ts";

conformance("epics", () => {
  const fake = startFakeEpics();
  const u = fake.urls;
  const cs = createEpics({
    pvwsUrl: u.pvws_url,
    archiverUrl: u.archiver_url,
    channelFinderUrl: u.channelfinder_url,
    ologUrl: u.olog_url,
    alarmLoggerUrl: u.alarm_logger_url,
    readTimeoutMs: 300,
    writeTimeoutMs: 1000,
  });
  return Promise.resolve({
    cs,
    readable: ["SR:BPM:01:X", "SR:DCCT:CURRENT", "SR:MODE", "SR:ORBIT:WF"],
    broken: "SR:GHOST:PV",
    writable: { device: "SR:COR:H01:SETPT", values: [1.25, -0.5] },
    readOnly: "SR:DCCT:CURRENT",
    search: { pattern: "SR:BPM:*:X", min: 24 },
    logs: {
      from: new Date(fake.nowMs - 2 * 86_400_000).toISOString(),
      to: new Date(fake.nowMs).toISOString(),
    },
    [Symbol.asyncDispose]: () => fake.close(),
  });
});
