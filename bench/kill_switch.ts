/**
 * Bench figure: what asking the kill switches before every write costs. A
 * 30-point scan of a corrector through the fake pvws gateway (2 ms per
 * message each way), run by the executor with the live check (the site
 * file named by `ACCEL_AGENT_SITE_FILE`, the absent `/etc` one, and the
 * config file's `[safety] writes_enabled`, each read whole, as the program
 * does) against the same scan without it, in the same run; and one check
 * alone against one scan point. The bound it pays for: a switch turned off
 * takes effect at the next write or scan point (at most the one write whose
 * check had passed still goes), and within a second during a WAIT.
 *
 * @module
 */
import { createEpics } from "../src/adapters/epics/mod.ts";
import { executePlan } from "../src/plan/executor.ts";
import { type Plan, planHash } from "../src/plan_model/plan.ts";
import { parseLimits } from "../src/safety/limits.ts";
import { readConfigSwitch, readSiteSwitches, SITE_FILE_ENV } from "../src/safety/site.ts";
import { startFakeEpics } from "../tests/support/facility/fake_epics.ts";
import { ROOT } from "../tests/support/run_agent.ts";
import { type Figure, median } from "./figure.ts";

const POINTS = 30;
const REPS = 5;

export async function killSwitchBench(): Promise<Figure[]> {
  const dir = await Deno.makeTempDir({ prefix: "accel-bench-switch-" });
  await using fake = startFakeEpics({ latencyMs: 2 });
  const cs = createEpics({ pvwsUrl: fake.pvws.url, pvget: "off" });
  try {
    const site = `${dir}/site.toml`;
    await Deno.writeTextFile(site, 'writes_enabled = true\nreason = "bench"\n');
    const env = (n: string) => (n === SITE_FILE_ENV ? site : undefined);
    const config = `${ROOT}/configs/default.toml`;
    const killSwitch = async () => {
      const [s, c] = await Promise.all([readSiteSwitches(env), readConfigSwitch(config)]);
      return s.every((x) => x.writesEnabled) && c.writesEnabled ? undefined : "off";
    };
    const limits = parseLimits(
      `[limits."SR:COR:H01:SETPT"]\nmin = -2\nmax = 2\nmax_step = 0.5\ntolerance = 0.001\n`,
      "bench.toml",
    );
    const plan: Plan = {
      description: "bench scan",
      actions: [{
        type: "scan",
        writeDevice: "SR:COR:H01:SETPT",
        start: 0.5,
        stop: 0.8,
        steps: POINTS,
        readDevices: ["SR:BPM:01:X"],
        dwellSeconds: 0,
      }],
    };
    const hash = await planHash(plan);
    const scan = async (live: boolean): Promise<number> => {
      const t = performance.now();
      const r = await executePlan(plan, hash, {
        cs,
        limits,
        policy: { writesEnabled: true, maxScanPoints: 100, maxPlanSeconds: 600, limitsSource: "" },
        signal: new AbortController().signal,
        now: () => Date.now(),
        ...(live ? { killSwitch } : {}),
      });
      if (r.status !== "completed") throw new Error(`bench scan ${r.status}: ${r.errors}`);
      return (performance.now() - t) / POINTS;
    };
    await scan(false); // warm up: connect, probe the readback names once
    const without: number[] = [];
    const withCheck: number[] = [];
    for (let i = 0; i < REPS; i++) {
      without.push(await scan(false));
      withCheck.push(await scan(true));
    }
    const checks: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await killSwitch();
      checks.push(performance.now() - t);
    }
    const [w, b, c] = [median(withCheck), median(without), median(checks)];
    return [
      {
        name: `scan point via fake pvws (2 ms/msg), kill switches asked before each write vs not`,
        value: w,
        baseline: b,
        judged: `${(w / b).toFixed(2)}× the baseline; one check ${(c * 1000).toFixed(0)} µs`,
        goal: "≤ 1.25×, one check ≤ 1 ms",
        ok: w / b <= 1.25 && c <= 1,
      },
    ];
  } finally {
    await cs.close();
    await Deno.remove(dir, { recursive: true });
  }
}
