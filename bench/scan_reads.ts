/**
 * Bench figure: a scan-like loop, 50 steps × 20 read devices, through the
 * fake pvws gateway with 2 ms latency per message in each direction. Our
 * reads (one subscribe message for the batch; PVs stay monitored for a
 * second, so the next step's reads come from their live monitors) against
 * sequential per-device reads (subscribe, first update, clear, one device
 * after another), in the same run. Round trips are counted at the gateway:
 * subscribe messages per step. Batching alone, without the monitors, is
 * reported beside them.
 *
 * @module
 */
import { createEpics } from "../src/adapters/epics/mod.ts";
import { startFakeEpics } from "../tests/support/facility/fake_epics.ts";
import type { Figure } from "./figure.ts";

const STEPS = 50;
const DEVICES = Array.from({ length: 20 }, (_, i) => `SR:BPM:${String(i + 1).padStart(2, "0")}:X`);

interface Run {
  msPerStep: number;
  roundTrips: number;
}

async function scan(monitorLingerMs: number, batched: boolean): Promise<Run> {
  await using fake = startFakeEpics({ latencyMs: 2 });
  const cs = createEpics({ pvwsUrl: fake.pvws.url, pvget: "off", monitorLingerMs });
  const check = (ok: boolean) => {
    if (!ok) throw new Error("scan bench: a read failed");
  };
  const step = batched
    ? async () => check((await cs.read(DEVICES)).every((r) => r.ok))
    : async () => {
      for (const d of DEVICES) check((await cs.read([d]))[0]?.ok === true);
    };
  const t = performance.now();
  for (let i = 0; i < STEPS; i++) await step();
  const run = {
    msPerStep: (performance.now() - t) / STEPS,
    roundTrips: fake.pvws.stats.subscribes / STEPS,
  };
  await cs.close();
  return run;
}

export async function scanReads(): Promise<Figure> {
  await scan(1000, true); // warm up
  const ours = await scan(1000, true);
  const batchOnly = await scan(0, true);
  const seed = await scan(0, false);
  const rt = (r: Run) => r.roundTrips.toFixed(2);
  return {
    name: "scan step: 20 reads via fake pvws (2 ms/msg), ours vs sequential per device",
    value: ours.msPerStep,
    baseline: seed.msPerStep,
    judged: `${rt(ours)} vs ${rt(seed)} round trips/step (batching alone: ${rt(batchOnly)}, ` +
      `${batchOnly.msPerStep.toFixed(1)} ms/step)`,
    goal: "≤ 1.2 round trips/step",
    ok: ours.roundTrips <= 1.2 && batchOnly.roundTrips <= 1.2,
  };
}
