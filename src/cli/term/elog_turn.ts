/**
 * What a turn adds to the logbook drafts of the plans it ran: the model's
 * words after the plan (its summary, shown in the entry as the model's and
 * fenced) and the plots of a scan drawn after it (attached, from the work
 * directory only). The numbers of the entry never come from here.
 *
 * @module
 */
import type { AgentEvent } from "../../agent/events.ts";
import type { Draft } from "../../elog/mod.ts";
import type { PlanPath } from "../../app/plan_wiring.ts";
import { resultOf } from "../../tools/results.ts";

export class TurnNotes {
  /** True once a plan's result came in: the model's text after it is its summary. */
  #afterPlan = false;
  #text = "";
  #streaming = "";
  #scanPlots = new Set<string>();
  #plots: string[] = [];

  add(ev: AgentEvent): void {
    switch (ev.type) {
      case "tool_start":
        if (ev.name === "plot" && (ev.args as { source?: unknown } | null)?.source === "scan") {
          this.#scanPlots.add(ev.id);
        }
        break;
      case "tool_end": {
        if (ev.name === "propose_plan") {
          this.#afterPlan = true;
          this.#text = "";
          this.#streaming = "";
        }
        const plot = resultOf("plot", ev);
        if (plot && this.#afterPlan && this.#scanPlots.has(ev.id)) this.#plots.push(plot.svg);
        break;
      }
      case "text":
        if (this.#afterPlan) this.#streaming += ev.delta;
        break;
      case "message_end":
        this.#text += this.#streaming;
        this.#streaming = "";
        break;
      case "retry":
        if (ev.discardedText) this.#streaming = "";
        break;
      default:
        break;
    }
  }

  /** The model's words after the last plan of the turn. */
  get summary(): string {
    return (this.#text + this.#streaming).trim();
  }

  get plots(): string[] {
    return [...this.#plots];
  }
}

/**
 * The drafts made during the turn, each with the question and the turn's
 * notes added. Drafts that cannot be annotated are returned as they are.
 */
export async function turnDrafts(
  plans: PlanPath,
  question: string | undefined,
  notes?: TurnNotes,
): Promise<Draft[]> {
  // Opened when a plan ended: until then there is nothing to draft.
  const elog = plans.elogIfOpen();
  if (!elog) return [];
  const out: Draft[] = [];
  for (const id of elog.takeNew()) {
    try {
      out.push(
        await elog.annotate(id, {
          ...(question ? { question } : {}),
          ...(notes?.summary ? { modelSummary: notes.summary } : {}),
          ...(notes?.plots.length ? { attach: notes.plots } : {}),
        }),
      );
    } catch {
      // As it was made; a draft that cannot be read at all is said by its problem line.
      const d = await elog.load(id).catch(() => undefined);
      if (d) out.push(d);
    }
  }
  return out;
}
