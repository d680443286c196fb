/**
 * Every shipped task against the facility it is graded on, at several seeds:
 * the devices it names exist, the cells its words name are where the
 * catalogue puts its devices, the alarm entries it adds describe alarms the
 * conditioned facility is in, the facts its premise and expected answer rest
 * on (`expect`) hold, and the numbers it grades against can be read. A task
 * that disagrees with its facility fails here, naming the task, the seed and
 * the fact.
 */

import assert from "node:assert/strict";
import { ManualClock } from "../../src/adapters/clock.ts";
import type { ControlSystem } from "../../src/adapters/adapter.ts";
import type { Simulator } from "../../src/adapters/simulator/mod.ts";
import { simulatorFor, withConditions } from "../../src/eval/conditions.ts";
import type { Expect, Task } from "../../src/eval/task.ts";
import { shippedTasks } from "./scripted_model.ts";

const SEEDS = [1, 2, 3, 5];
/** Two starts: a morning and a night, so the facility's routine differs between them. */
const STARTS = [Date.parse("2025-03-04T10:17:00Z"), Date.parse("2025-06-11T23:41:00Z")];
const MIN = 60_000;
const NAME = /^[A-Z][A-Z0-9]*(:[A-Z0-9]+)+$/;

/** Device names a task uses: in its conditions, grades, expectations and solving transcript's calls. */
function namedDevices(task: Task): string[] {
  const out = new Set<string>();
  const add = (x: unknown) => {
    if (typeof x === "string" && NAME.test(x)) out.add(x);
    else if (Array.isArray(x)) x.forEach(add);
  };
  const c = task.conditions;
  for (const f of c.faults ?? []) {
    if ("device" in f || "gauge" in f) add("gauge" in f ? f.gauge : f.device);
  }
  for (const d of Object.keys(c.writes ?? {})) add(d);
  for (const l of c.logs ?? []) add(l.devices);
  for (const d of Object.keys(c.descriptions ?? {})) add(d);
  for (const g of task.grade) {
    if ("devices" in g) add(g.devices);
    if (g.check === "answer_number" && "device" in g.truth) add(g.truth.device);
    if (g.check === "answer_number" && "of" in g.truth) add(g.truth.of);
    if (g.check === "plan") {
      for (const w of g.writes ?? []) add(w.device);
      add(g.scan?.device);
      add(g.scan?.reads);
      add(g.observes);
    }
  }
  for (const e of task.expect ?? []) {
    if ("device" in e) add(e.device);
    if ("differ" in e) add(e.differ);
    if ("alarm" in e) add(e.alarm);
    if ("archive" in e) add(e.archive);
  }
  const walk = (x: unknown) => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (x !== null && typeof x === "object") {
      for (const [k, v] of Object.entries(x)) {
        if (["device", "devices", "writeDevice", "readDevices"].includes(k)) add(v);
        else walk(v);
      }
    }
  };
  walk(task.scripted?.solving);
  // Log device filters may be wildcards; the fault helpers name prefixes (LINAC:COR:H03).
  return [...out];
}

function isPrefix(sim: Simulator, name: string): boolean {
  return sim.facility.devices.some((d) => d.prefix === name);
}

async function read(cs: ControlSystem, name: string) {
  const [r] = await cs.read([name]);
  assert.ok(r?.ok, `${name} cannot be read: ${r?.error}`);
  return r;
}

/** The value a device was archived with at `t` (the sample at or just after it). */
async function archivedAt(cs: ControlSystem, name: string, t: number) {
  const [s] = await cs.archive({
    devices: [name],
    from: new Date(t).toISOString(),
    to: new Date(t + 10 * MIN).toISOString(),
  });
  const sample = s?.samples[0];
  assert.ok(sample, `${name} has no archived sample after ${new Date(t).toISOString()}`);
  return sample;
}

async function checkExpect(cs: ControlSystem, e: Expect, start: number): Promise<void> {
  if ("differ" in e) {
    const [a, b] = await Promise.all(e.differ.map((n) => read(cs, n)));
    const diff = Math.abs(Number(a?.value) - Number(b?.value));
    assert.ok(diff >= e.by, `${e.differ.join(" vs ")} differ by ${diff}, expected ≥ ${e.by}`);
    return;
  }
  if ("alarm" in e) {
    const entries = await cs.logs({
      source: "alarm",
      from: new Date(start - e.within_min * MIN).toISOString(),
      to: new Date(start + 1).toISOString(),
      device: e.alarm,
      limit: 1000,
    });
    assert.ok(
      entries.some((x) => x.status === e.status && x.devices.includes(e.alarm)),
      `the alarm log has no ${e.alarm} ${e.status} in the last ${e.within_min} min ` +
        `(it has ${entries.map((x) => x.title).join(", ") || "nothing"})`,
    );
    return;
  }
  if ("archive" in e) {
    const [s] = await cs.archive({
      devices: [e.archive],
      from: new Date(start - e.minutes * MIN).toISOString(),
      to: new Date(start).toISOString(),
    });
    const values = (s?.samples ?? []).map((x) => Number(x.value)).filter(Number.isFinite);
    assert.ok(values.length > 0, `${e.archive} has no archive`);
    const change = Math.max(...values) - Math.min(...values);
    if (e.min_change !== undefined) {
      assert.ok(
        change >= e.min_change,
        `${e.archive} changed ${change}, expected ≥ ${e.min_change}`,
      );
    }
    if (e.max_change !== undefined) {
      assert.ok(
        change <= e.max_change,
        `${e.archive} changed ${change}, expected ≤ ${e.max_change}`,
      );
    }
    return;
  }
  const at = e.minutes_ago === undefined ? undefined : start - e.minutes_ago * MIN;
  const r = at === undefined ? await read(cs, e.device) : await archivedAt(cs, e.device, at);
  const where = `${e.device}${at === undefined ? "" : ` ${e.minutes_ago} min before the start`}`;
  if (e.value !== undefined) assert.equal(r?.value, e.value, `${where} reads ${r?.value}`);
  if (e.min !== undefined) {
    assert.ok(Number(r?.value) >= e.min, `${where} reads ${r?.value} < ${e.min}`);
  }
  if (e.max !== undefined) {
    assert.ok(Number(r?.value) <= e.max, `${where} reads ${r?.value} > ${e.max}`);
  }
  if (e.severity !== undefined) {
    assert.equal(r?.severity, e.severity, `${where} severity ${r?.severity}`);
  }
  if (e.status !== undefined && "status" in (r ?? {})) {
    assert.equal((r as { status?: string }).status, e.status, `${where} status`);
  }
}

/** Every "cell N" the task's words name holds one of the task's devices, per the catalogue. */
async function checkCells(cs: ControlSystem, task: Task, devices: string[]): Promise<void> {
  const words = [...task.turns, ...(task.conditions.logs ?? []).flatMap((l) => [l.title, l.text])];
  const named = new Set<number>();
  for (const w of words) for (const m of w.matchAll(/\bcell (\d+)/gi)) named.add(Number(m[1]));
  if (named.size === 0) return;
  const infos = await cs.describe(devices);
  const cells = new Set(
    infos.flatMap((i) => [...i.description.matchAll(/\(cell (\d+)\)/g)].map((m) => Number(m[1]))),
  );
  for (const n of named) {
    assert.ok(
      cells.has(n),
      `the task speaks of cell ${n}; its devices are in cells ${[...cells].join(", ")}`,
    );
  }
}

/** Alarm entries a task adds describe an alarm the device is in at that moment. */
async function checkAlarmEntries(cs: ControlSystem, task: Task, start: number): Promise<void> {
  for (const l of task.conditions.logs ?? []) {
    if (l.source !== "alarm") continue;
    assert.ok(l.devices.length > 0, `an alarm entry names no device: ${l.title}`);
    for (const d of l.devices) {
      const [info] = await cs.describe([d]);
      assert.ok(
        info?.alarm || info?.type === "enum",
        `${d} has no alarm limits, yet an alarm entry`,
      );
      const s = await archivedAt(cs, d, start - l.minutes_ago * MIN);
      assert.equal(
        s.severity,
        l.severity,
        `${d} was ${s.severity} when its ${l.status} entry was logged`,
      );
      const v = Number(s.value);
      const limit = info?.alarm
        ?.[(l.status ?? "").toLowerCase() as "high" | "hihi" | "low" | "lolo"];
      if (limit !== undefined) {
        const above = l.status === "HIGH" || l.status === "HIHI";
        assert.ok(
          above ? v >= limit : v <= limit,
          `${d} read ${v} against its ${l.status} limit ${limit}`,
        );
      }
    }
  }
}

Deno.test("every shipped task's premise and expected answer hold on its facility, at several seeds", async () => {
  const tasks = await shippedTasks();
  const problems: string[] = [];
  for (const task of tasks) {
    for (const seed of SEEDS) {
      for (const start of STARTS) {
        const clock = new ManualClock(start);
        const sim = simulatorFor(seed, task.conditions, start, clock);
        const where = `${task.id} (seed ${seed}, ${new Date(start).toISOString()})`;
        try {
          const devices = namedDevices(task);
          const missing = devices.filter((d) => !sim.facility.byName.has(d) && !isPrefix(sim, d));
          assert.deepEqual(missing, [], "devices the catalogue does not have");
          const cs = await withConditions(sim, task.conditions, start, () => clock.now());
          const existing = devices.filter((d) => sim.facility.byName.has(d));
          await checkCells(cs, task, existing);
          await checkAlarmEntries(cs, task, start);
          for (const e of task.expect ?? []) await checkExpect(cs, e, start);
          for (const g of task.grade) {
            if (g.check !== "answer_number" || !("device" in g.truth)) continue;
            const r = await read(cs, g.truth.device);
            assert.equal(typeof r?.value, "number", `${g.truth.device} is graded as a number`);
          }
        } catch (e) {
          problems.push(`${where}: ${e instanceof Error ? e.message.split("\n")[0] : e}`);
        }
        await sim.close();
      }
      // Facts that hold at the first seeds' starts hold at the others: one start is enough after.
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("a task whose words name a cell its devices are not in fails the consistency check", async () => {
  const clock = new ManualClock(STARTS[0] ?? 0);
  const sim = simulatorFor(1, {}, STARTS[0] ?? 0, clock);
  const task = {
    turns: ["We have a vacuum alarm in ring cell 12. How bad is it?"],
    conditions: {},
  } as unknown as Task;
  // RING:VAC:IG:12 is in cell 04; the gauges of cell 12 are 34–36.
  await assert.rejects(() => checkCells(sim, task, ["RING:VAC:IG:12:PRES"]), /cell 12/);
  await checkCells(sim, task, ["RING:VAC:IG:35:PRES"]);
});

Deno.test("an alarm entry the facility is not in fails the consistency check", async () => {
  const start = STARTS[0] ?? 0;
  const clock = new ManualClock(start);
  const sim = simulatorFor(1, {}, start, clock);
  const entry = {
    source: "alarm" as const,
    minutes_ago: 13,
    title: "RF:STN:03:REFL:PWR",
    text: "entered MINOR (HIGH) at 41 kW",
    devices: ["RF:STN:03:REFL:PWR"],
    severity: "MINOR" as const,
    status: "HIGH",
  };
  const task = { conditions: { logs: [entry] } } as unknown as Task;
  await assert.rejects(() => checkAlarmEntries(sim, task, start), /RF:STN:03:REFL:PWR/);
});
