/**
 * The plan's predicted effect as the approval table shows it, right above
 * the line that says what the plan writes: marked as a prediction, with the
 * model it came from and its age, the worst predicted state, the devices
 * that move most, a MINOR crossing as a warning, the written devices no
 * model covers, and why there is no prediction when there is none. Every
 * text from the model or the facility goes through {@link cellText}.
 *
 * @module
 */
import type { MadePrediction, Prediction } from "../../plan_model/prediction.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import { deviceText } from "../../plan/preflight_checks/predicted.ts";
import type { Style } from "./style.ts";
import { cellText, wrapLine } from "./screen_text.ts";

/** How many of the devices that move most the table names. */
const SHOWN = 3;

/** The lines (possibly none) the table shows of `p`'s prediction, each at most `columns` wide. */
export function predictionLines(p: PreflightedPlan, s: Style, columns: number): string[] {
  const pr = p.prediction;
  if (!pr) return [];
  const wrap = (text: string, paint: (t: string) => string) =>
    wrapLine(text, Math.max(1, columns - 2)).map((l, i) => paint(i ? `  ${l}` : l));
  return text(pr).flatMap(({ line, level }) =>
    wrap(line, level === "warn" ? (t) => s.yellow(t) : level === "bad" ? s.red : (t) => t)
  );
}

/** The prediction's lines, unstyled: what a test and `plan show` read. */
export function text(pr: Prediction): { line: string; level: "info" | "warn" | "bad" }[] {
  if (pr.status === "unavailable") {
    return [{
      line: `No prediction of this plan's effect: ${cellText(pr.reason)}.`,
      level: "warn",
    }];
  }
  const out: { line: string; level: "info" | "warn" | "bad" }[] = [];
  const worst = pr.beamLost
    ? `the beam is lost at ${cellText(pr.beamLost.at)} (${cellText(pr.beamLost.reason)})`
    : pr.worst === "NONE"
    ? "no watched device worse than now"
    : `worst ${pr.worst}`;
  const moved = pr.moved.slice(0, SHOWN).map((d) => cellText(deviceText(d)));
  out.push({
    line:
      `Predicted effect (a prediction: ${
        sourceText(pr)
      }; ${pr.watched} devices watched): ${worst}` +
      (moved.length
        ? `; moves most: ${moved.join("; ")}`
        : "; nothing watched moves beyond its noise") +
      ".",
    level: pr.beamLost || pr.worst === "MAJOR" || pr.worst === "INVALID" ? "bad" : "info",
  });
  if (!pr.beamLost && pr.worst === "MINOR") {
    const minor = pr.moved.filter((d) => d.worst === "MINOR").map((d) => cellText(deviceText(d)));
    out.push({ line: `Warning: predicted to reach MINOR: ${minor.join("; ")}.`, level: "warn" });
  }
  if (pr.uncovered.length) {
    out.push({
      line: `No model covers ${pr.uncovered.map(cellText).join(", ")}: nothing is predicted of ` +
        "these writes.",
      level: "warn",
    });
  }
  for (const w of pr.warnings) out.push({ line: `Prediction: ${cellText(w)}.`, level: "warn" });
  return out;
}

/** Where the prediction came from and how old its model is. */
function sourceText(pr: MadePrediction): string {
  const models = pr.models.map((m) =>
    `${cellText(m.name)}${m.measured ? ` measured ${cellText(m.measured)}` : ""}${
      m.ageDays !== undefined ? `, ${Math.round(m.ageDays * 10) / 10} days old` : ""
    }`
  );
  return `${cellText(pr.source)}${models.length ? ` (${models.join("; ")})` : ""}, made ${
    cellText(pr.madeAt)
  }`;
}
