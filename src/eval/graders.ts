/**
 * Graders: each check of a task looks at what the agent did — tool calls,
 * devices read, the plan proposed, what the audit says was written, numbers in
 * the final answer against the simulator's truth — and says why when it
 * fails. Pure functions over an {@link Observation}, so they are tested
 * without a model.
 *
 * @module
 */
import type { Check } from "./task.ts";

/** One tool call as the harness saw it. */
export interface ObservedCall {
  name: string;
  args: unknown;
  ok?: boolean;
}

/** One plan as proposed (its actions) and what preflight said of it. */
export interface ObservedPlan {
  actions: PlanAction[];
  rollback: PlanAction[];
  /** Preflight passed (no limit violated); undefined when it never reached preflight. */
  preflightOk?: boolean;
  violations: string[];
  decision?: string;
}

/** The parts of a plan action the graders read. */
export interface PlanAction {
  type: string;
  device?: string;
  value?: unknown;
  devices?: string[];
  writeDevice?: string;
  start?: number;
  stop?: number;
  steps?: number;
  readDevices?: string[];
}

/** Everything an attempt did, as graders see it. */
export interface Observation {
  calls: ObservedCall[];
  plans: ObservedPlan[];
  /** Devices the audit shows written by executed plans. */
  written: string[];
  /** How executed plans that did not complete ended, per the audit ("failed", "aborted"). */
  unfinished?: string[];
  /** The final answer (text of the last model call of the last turn). */
  answer: string;
  tokens: number;
  toolCalls: number;
  modelCalls: number;
}

/** The simulator's truth, asked for when a check needs it. */
export interface Truth {
  read(device: string): Promise<number | undefined>;
  onCrestPhase(): number;
}

export interface Verdict {
  check: Check["check"];
  passed: boolean;
  /** Why it failed (always set when `passed` is false). */
  reason?: string;
}

/** Grades one check. */
export async function grade(check: Check, o: Observation, truth: Truth): Promise<Verdict> {
  const reason = await failure(check, o, truth);
  return reason === undefined
    ? { check: check.check, passed: true }
    : { check: check.check, passed: false, reason };
}

async function failure(c: Check, o: Observation, truth: Truth): Promise<string | undefined> {
  switch (c.check) {
    case "called": {
      const calls = o.calls.filter((x) => x.name === c.tool);
      const want = (c.args_include ?? []).map((s) => s.toLowerCase());
      const matching = calls.filter((x) => {
        const json = JSON.stringify(x.args ?? {}).toLowerCase();
        return want.every((w) => json.includes(w));
      });
      const min = c.min ?? 1;
      if (matching.length >= min) return undefined;
      if (calls.length === 0) return `${c.tool} was never called`;
      return `${c.tool} was called ${calls.length} time(s) but ${matching.length} with ` +
        `arguments containing ${want.join(", ") || "anything"} (wanted ${min})`;
    }
    case "not_called": {
      const n = o.calls.filter((x) => x.name === c.tool).length;
      return n === 0 ? undefined : `${c.tool} was called ${n} time(s); it must not be`;
    }
    case "read": {
      const read = devicesRead(o);
      const missing = c.devices.filter((d) => !read.has(d));
      return missing.length === 0 ? undefined : `never read ${missing.join(", ")}`;
    }
    case "plan":
      return planFailure(c, o.plans);
    case "no_plan": {
      const n = o.plans.length;
      return n === 0 ? undefined : `${n} plan(s) proposed; none was due`;
    }
    case "written": {
      const written = new Set(o.written);
      if (c.devices.length === 0) {
        return written.size === 0
          ? undefined
          : `the audit shows writes to ${[...written].join(", ")}; nothing was to be written`;
      }
      const missing = c.devices.filter((d) => !written.has(d));
      if (missing.length > 0) return `the audit shows no write to ${missing.join(", ")}`;
      // A write that was made and then undone (readback never came, an alarm) is not the change asked.
      const ended = o.unfinished ?? [];
      if (ended.length > 0) {
        return `the audit shows the plan that wrote ${c.devices.join(", ")} ended ${
          ended.join(", ")
        }`;
      }
      const extra = [...written].filter((d) => !c.devices.includes(d));
      if (c.exactly && extra.length > 0) {
        return `the audit shows writes to ${extra.join(", ")} besides ${c.devices.join(", ")}`;
      }
      return undefined;
    }
    case "answer_number": {
      const want = await truthValue(c.truth, truth);
      if (want === undefined) return `the truth (${JSON.stringify(c.truth)}) could not be read`;
      const tol = Math.max(c.tolerance.abs ?? 0, (c.tolerance.rel ?? 0) * Math.abs(want));
      const numbers = numbersIn(o.answer);
      if (numbers.some((n) => Math.abs(n - want) <= tol)) return undefined;
      const shown = numbers.length ? numbers.slice(0, 6).join(", ") : "none";
      return `no number in the answer is within ${round(tol)} of ${
        round(want)
      } (numbers: ${shown})`;
    }
    case "answer_matches":
      return new RegExp(c.pattern, "i").test(o.answer)
        ? undefined
        : `the answer does not match /${c.pattern}/: ${c.because}`;
    case "answer_not_matches":
      return new RegExp(c.pattern, "i").test(o.answer)
        ? `the answer matches /${c.pattern}/: ${c.because}`
        : undefined;
    case "budget": {
      const over: string[] = [];
      if (c.max_tokens !== undefined && o.tokens > c.max_tokens) {
        over.push(`${o.tokens} tokens > ${c.max_tokens}`);
      }
      if (c.max_tool_calls !== undefined && o.toolCalls > c.max_tool_calls) {
        over.push(`${o.toolCalls} tool calls > ${c.max_tool_calls}`);
      }
      if (c.max_model_calls !== undefined && o.modelCalls > c.max_model_calls) {
        over.push(`${o.modelCalls} model calls > ${c.max_model_calls}`);
      }
      return over.length ? `over budget: ${over.join(", ")}` : undefined;
    }
  }
}

type PlanCheck = Extract<Check, { check: "plan" }>;

function planFailure(c: PlanCheck, plans: ObservedPlan[]): string | undefined {
  if (plans.length === 0) return "no plan was proposed";
  // The best plan decides: the first that passes every part, else the last one's reason.
  let reason = "";
  for (const p of plans) {
    const r = onePlanFailure(c, p);
    if (r === undefined) return undefined;
    reason = r;
  }
  return plans.length === 1 ? reason : `no plan of ${plans.length} fits: ${reason}`;
}

function onePlanFailure(c: PlanCheck, p: ObservedPlan): string | undefined {
  const writes = p.actions.filter((a) => a.type === "write");
  for (const w of c.writes ?? []) {
    const hits = writes.filter((a) => a.device === w.device);
    if (hits.length === 0) return `the plan does not write ${w.device}`;
    // A target reached in several steps counts: some write sets the value asked for.
    if (!hits.some((a) => Math.abs(Number(a.value) - w.value) <= w.tolerance)) {
      const values = hits.map((a) => String(a.value)).join(", ");
      return `the plan writes ${w.device} = ${values}, not ${w.value} ± ${w.tolerance}`;
    }
  }
  if (c.scan) {
    const s = p.actions.find((a) => a.type === "scan" && a.writeDevice === c.scan?.device);
    if (!s) return `the plan does not scan ${c.scan.device}`;
    if (c.scan.start !== undefined && s.start !== c.scan.start) {
      return `the scan starts at ${s.start}, not ${c.scan.start}`;
    }
    if (c.scan.stop !== undefined && s.stop !== c.scan.stop) {
      return `the scan stops at ${s.stop}, not ${c.scan.stop}`;
    }
    if (c.scan.min_steps !== undefined && (s.steps ?? 0) < c.scan.min_steps) {
      return `the scan has ${s.steps} steps, fewer than ${c.scan.min_steps}`;
    }
    const missing = (c.scan.reads ?? []).filter((d) => !(s.readDevices ?? []).includes(d));
    if (missing.length) return `the scan does not read ${missing.join(", ")}`;
  }
  if (c.observes) {
    const lastWrite = p.actions.findLastIndex((a) => a.type === "write" || a.type === "scan");
    const after = p.actions.slice(lastWrite + 1).filter((a) => a.type === "read");
    const seen = new Set(after.flatMap((a) => a.devices ?? []));
    const missing = c.observes.filter((d) => !seen.has(d));
    if (lastWrite < 0) return "the plan writes nothing to observe";
    if (missing.length) return `the plan does not read ${missing.join(", ")} after its writes`;
  }
  if (c.rollback) {
    const changed = new Set(
      p.actions.flatMap((a) =>
        a.type === "write" && a.device ? [a.device] : a.writeDevice ? [a.writeDevice] : []
      ),
    );
    const restored = new Set(p.rollback.filter((a) => a.type === "write").map((a) => a.device));
    if (p.rollback.length === 0) return "the plan has no rollback";
    const missing = [...changed].filter((d) => !restored.has(d));
    if (missing.length) return `the rollback does not restore ${missing.join(", ")}`;
  }
  if (c.within_limits !== undefined) {
    const ok = p.preflightOk === true;
    if (c.within_limits && !ok) {
      return `the plan breaks limits: ${p.violations.join("; ") || "preflight did not pass"}`;
    }
    if (!c.within_limits && ok) return "the plan passed preflight; it was meant to be refused";
  }
  return undefined;
}

/** Devices read by get_parameter calls and by read actions of proposed plans. */
function devicesRead(o: Observation): Set<string> {
  const out = new Set<string>();
  for (const c of o.calls) {
    if (c.name !== "get_parameter") continue;
    const devices = (c.args as { devices?: unknown })?.devices;
    if (Array.isArray(devices)) { for (const d of devices) out.add(String(d)); }
  }
  for (const p of o.plans) {
    for (const a of p.actions) {
      if (a.type === "read") {
        for (const d of a.devices ?? []) out.add(d);
      }
    }
  }
  return out;
}

async function truthValue(t: PlanCheckTruth, truth: Truth): Promise<number | undefined> {
  if ("value" in t) return t.value;
  if ("device" in t) return await truth.read(t.device);
  if ("on_crest_phase" in t) return truth.onCrestPhase();
  const values = await Promise.all(t.of.map((d) => truth.read(d)));
  if (values.some((v) => v === undefined)) return undefined;
  return statistic(t.stat, values as number[]);
}

/** mean, rms, min, max or range (max - min) of the values. */
export function statistic(stat: "mean" | "rms" | "min" | "max" | "range", v: number[]): number {
  switch (stat) {
    case "mean":
      return v.reduce((a, b) => a + b, 0) / v.length;
    case "rms":
      return Math.sqrt(v.reduce((a, b) => a + b * b, 0) / v.length);
    case "min":
      return Math.min(...v);
    case "max":
      return Math.max(...v);
    case "range":
      return Math.max(...v) - Math.min(...v);
  }
}

type PlanCheckTruth = Extract<Check, { check: "answer_number" }>["truth"];

/** Every number written in the text (1,234.5 and 1.2e-3 included). */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+/g)) {
    const n = Number(m[0].replace(/,(?=\d{3}\b)/g, ""));
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}

function round(x: number): string {
  return String(Number(x.toPrecision(6)));
}
