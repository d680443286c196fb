/**
 * The approval screen of the largest plan (500 actions, 200-character
 * labels) at 120 columns: the whole screen as the operator sees it
 * (description block, table, facts, the line above the question), against
 * `cli-table3` drawing the same rows' text, wrapped by the library, in the
 * same run (what the table cost before the program wrapped and drew it).
 *
 * @module
 */
import Table from "cli-table3";
import { planColumnWidths, renderPlan } from "../src/cli/term/plan_table.ts";
import { style } from "../src/cli/term/style.ts";
import type { Plan } from "../src/plan_model/plan.ts";
import { untrusted } from "../src/util/untrusted_text.ts";
import { fixture } from "../tests/plan/fixture.ts";
import { type Figure, median } from "./figure.ts";

const LABEL = "orbit check before and after the corrector trim, ".repeat(4).slice(0, 200);
const NAMES = ["LINAC:BPM:01:X", "LINAC:BPM:02:X", "LINAC:BPM:03:X"];

export async function planTableBench(): Promise<Figure> {
  await using f = await fixture();
  const plan: Plan = {
    description: LABEL.repeat(5),
    actions: [
      { type: "write", device: "LINAC:COR:H01:SETPT", value: 0.05, reason: LABEL },
      ...Array.from({ length: 499 }, (_, i) => ({
        type: "read" as const,
        devices: [NAMES[i % 3] ?? ""],
        label: LABEL,
      })),
    ],
  };
  const checked = await f.service.check(plan);
  const s = style(true);
  const library = () => {
    const table = new Table({
      head: ["#", "Action", "Device", "Current → New (Δ)", "Reason / detail"],
      style: { head: [], border: [] },
      wordWrap: true,
      colWidths: planColumnWidths(120, 19),
    });
    for (const [i, a] of plan.actions.entries()) {
      const device = a.type === "read" ? a.devices[0] : a.type === "write" ? a.device : "";
      const text = a.type === "read" ? a.label : a.type === "write" ? a.reason : "";
      table.push([String(i + 1), a.type, untrusted(device ?? ""), "", untrusted(text ?? "")]);
    }
    return table.toString();
  };
  const screen = () => renderPlan(checked, s, 120);
  const ours: number[] = [], theirs: number[] = [];
  for (let i = 0; i < 7; i++) {
    // Alternated, so a busy moment weighs on both.
    for (const [fn, into] of [[screen, ours], [library, theirs]] as const) {
      const t = performance.now();
      fn();
      into.push(performance.now() - t);
    }
  }
  const value = median(ours), baseline = median(theirs);
  return {
    name: "approval screen, 500 actions (vs cli-table3, same rows)",
    value,
    baseline,
    judged: `${(value / baseline).toFixed(2)}× the library's table`,
    goal: "≤ 1× the library's table",
    ok: value <= baseline,
  };
}
