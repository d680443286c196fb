/**
 * The operator's approval in the terminal: the plan as a table ending with
 * the line that says what it writes, then right below it a yes/no (default
 * no) for a single write, or all / none / modify / choose for more. Modify edits scan steps, dwell and wait times; choose
 * cherry-picks writes and scans. Every changed plan is preflighted again
 * and shown again; the decision is bound to the hash of the plan shown last.
 *
 * @module
 */
import type { Action, Plan } from "../../plan_model/plan.ts";
import type { PreflightedPlan } from "../../plan_model/preflighted.ts";
import type { ApprovalContext, Approver, Decision } from "../../safety/approval.ts";
import type { Io } from "../../app/io.ts";
import { style } from "./style.ts";
import { cellText } from "./screen_text.ts";

type Choice = "all" | "none" | "modify" | "choose";

/**
 * Takes the terminal for a prompt (stops the live output and whatever else
 * reads the keys); returns, if anything, the function that gives it back.
 * Until then every key typed is the prompt's.
 */
export type ClaimTerminal = () => (() => void) | void;

export class TerminalApprover implements Approver {
  constructor(readonly io: Io, readonly beforePrompt: ClaimTerminal = () => {}) {}

  async decide(proposed: PreflightedPlan, ctx: ApprovalContext): Promise<Decision> {
    const release = this.beforePrompt();
    try {
      return await this.#decide(proposed, ctx);
    } finally {
      release?.();
    }
  }

  async #decide(proposed: PreflightedPlan, ctx: ApprovalContext): Promise<Decision> {
    // Loaded on first use, each prompt from its own package: most sessions never see them.
    const [{ default: confirm }, { default: select }] = await Promise.all([
      import("@inquirer/confirm"),
      import("@inquirer/select"),
    ]);
    const { planColumns, renderPlan } = await import("./plan_table.ts");
    const s = style(this.io.color);
    let shown = proposed;
    let partial = false;
    try {
      for (;;) {
        this.io.out(`\n${renderPlan(shown, s, planColumns(this.io))}`);
        if (!shown.ok) return reject(shown, "the changed plan fails preflight");
        const changing = shown.plan.actions.filter((a) => a.type === "write" || a.type === "scan");
        const tunable = shown.plan.actions.some((a) => a.type === "scan" || a.type === "wait");
        if (changing.length <= 1 && !tunable) {
          const yes = await confirm({ message: "Run this plan?", default: false }, {
            signal: ctx.signal,
          });
          return yes ? approve(shown, partial) : reject(shown, "rejected by the operator");
        }
        const choice = await select<Choice>({
          message: "Run this plan?",
          default: "none",
          choices: [
            { name: "all: run it as shown", value: "all" },
            { name: "none: reject it", value: "none" },
            ...(tunable
              ? [{
                name: "modify: change scan steps, dwell and wait times",
                value: "modify" as const,
              }]
              : []),
            ...(changing.length > 1
              ? [{ name: "choose: pick the changes to run", value: "choose" as const }]
              : []),
          ],
        }, { signal: ctx.signal });
        if (choice === "all") return approve(shown, partial);
        if (choice === "none") return reject(shown, "rejected by the operator");
        const plan = choice === "modify"
          ? await modify(shown.plan, ctx.signal)
          : await choose(shown.plan, ctx.signal);
        if (plan === undefined) return reject(shown, "no change was chosen");
        partial = partial || choice === "choose";
        shown = await ctx.repreflight(plan);
      }
    } catch (e) {
      // Ctrl-C or Esc at the prompt, or the turn cancelled: nothing runs.
      if (
        e instanceof Error &&
        (e.name === "ExitPromptError" || e.name === "AbortPromptError" || e.name === "AbortError")
      ) {
        this.io.out("\n");
        return reject(shown, "cancelled at the approval prompt");
      }
      throw e;
    }
  }
}

function approve(p: PreflightedPlan, partial: boolean): Decision {
  return {
    decision: partial ? "partial" : "approved",
    plan: p.plan,
    planHash: p.hash,
    decidedBy: "terminal",
  };
}

function reject(p: PreflightedPlan, reason: string): Decision {
  return { decision: "rejected", plan: p.plan, planHash: p.hash, decidedBy: "terminal", reason };
}

async function modify(plan: Plan, signal: AbortSignal): Promise<Plan> {
  const { default: number } = await import("@inquirer/number");
  const actions: Action[] = [];
  for (const [i, a] of plan.actions.entries()) {
    if (a.type === "scan") {
      const steps = await number({
        message: `scan ${i + 1} (${cellText(a.writeDevice)}): points`,
        default: a.steps,
        min: 2,
        step: 1,
        required: true,
      }, { signal });
      const dwell = await number({
        message: `scan ${i + 1}: dwell seconds`,
        default: a.dwellSeconds,
        min: 0,
        step: "any",
        required: true,
      }, { signal });
      actions.push({ ...a, steps: steps ?? a.steps, dwellSeconds: dwell ?? a.dwellSeconds });
    } else if (a.type === "wait") {
      const seconds = await number({
        message: `wait ${i + 1}: seconds`,
        default: a.seconds,
        min: 0,
        step: "any",
        required: true,
      }, { signal });
      actions.push({ ...a, seconds: seconds ?? a.seconds });
    } else {
      actions.push(a);
    }
  }
  return { ...plan, actions };
}

async function choose(plan: Plan, signal: AbortSignal): Promise<Plan | undefined> {
  const { default: checkbox } = await import("@inquirer/checkbox");
  const picked = new Set(
    await checkbox({
      message: "Changes to run (space toggles, enter confirms)",
      choices: plan.actions.flatMap((a, i) =>
        a.type === "write"
          ? [{
            name: `${i + 1}. write ${cellText(a.device)} = ${cellText(String(a.value))}`,
            value: i,
            checked: true,
          }]
          : a.type === "scan"
          ? [{
            name: `${i + 1}. scan ${cellText(a.writeDevice)} ${a.start} … ${a.stop}`,
            value: i,
            checked: true,
          }]
          : []
      ),
    }, { signal }),
  );
  if (picked.size === 0) return undefined;
  const actions = plan.actions.filter((a, i) =>
    (a.type !== "write" && a.type !== "scan") || picked.has(i)
  );
  const written = new Set(
    actions.flatMap((
      a,
    ) => (a.type === "write" ? [a.device] : a.type === "scan" ? [a.writeDevice] : [])),
  );
  // A rollback write for a device no longer changed would be a change of its own.
  const rollback = plan.rollback?.filter((a) =>
    a.type === "write"
      ? written.has(a.device)
      : a.type === "scan"
      ? written.has(a.writeDevice)
      : true
  );
  return { ...plan, actions, ...(rollback ? { rollback } : {}) };
}
