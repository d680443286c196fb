/**
 * Profiles: what the agent may do in a given setting. `observer` reads only
 * (no plans, no sandbox writes); `operator` proposes plans that a person
 * approves (the default); `sim-eval` runs on the simulator only and may
 * approve plans automatically, for evaluation runs. Automatic approval on a
 * real machine is refused before anything starts.
 *
 * @module
 */
import type { PreflightedPlan } from "../plan_model/preflighted.ts";
import type { Approver, Decision } from "../safety/approval.ts";

export const PROFILE_NAMES = ["observer", "operator", "sim-eval"] as const;
export type ProfileName = typeof PROFILE_NAMES[number];

export interface Profile {
  name: ProfileName;
  /** Whether `propose_plan` is offered and `plan run` allowed. */
  plans: boolean;
  /** Whether the analysis sandbox may write its work directory. */
  sandboxWrites: boolean;
  /** Whether automatic approval may be configured. */
  mayAutoApprove: boolean;
  /** Whether it runs only on the simulator. */
  simulatorOnly: boolean;
}

export const PROFILES: Readonly<Record<ProfileName, Profile>> = {
  observer: {
    name: "observer",
    plans: false,
    sandboxWrites: false,
    mayAutoApprove: false,
    simulatorOnly: false,
  },
  operator: {
    name: "operator",
    plans: true,
    sandboxWrites: true,
    mayAutoApprove: false,
    simulatorOnly: false,
  },
  "sim-eval": {
    name: "sim-eval",
    plans: true,
    sandboxWrites: true,
    mayAutoApprove: true,
    simulatorOnly: true,
  },
};

/** What start-up knows when it checks the profile. */
export interface ProfileSetting {
  profile: ProfileName;
  /** `[facility] adapter`: "simulator", "epics", "tango". */
  adapter: string;
  /** `[profile] auto_approve`. */
  autoApprove: boolean;
}

/**
 * Why this setting must not start, or undefined when it may. A real machine
 * never runs with automatic approval, whatever the profile says.
 */
export function profileRefusal(s: ProfileSetting): string | undefined {
  const p = PROFILES[s.profile];
  const real = s.adapter !== "simulator";
  if (s.autoApprove && real) {
    return `automatic approval on a real machine (adapter "${s.adapter}") is refused; ` +
      `set [profile] auto_approve = false, or use the simulator`;
  }
  if (p.simulatorOnly && real) {
    return `the ${p.name} profile runs on the simulator only, not on adapter "${s.adapter}"`;
  }
  if (s.autoApprove && !p.mayAutoApprove) {
    return `the ${p.name} profile never approves plans automatically; ` +
      `auto_approve = true needs the sim-eval profile on the simulator`;
  }
  return undefined;
}

/**
 * Approves every plan that passed preflight (sim-eval with auto_approve only;
 * the limits, preflight, readback and audit still apply).
 */
export class AutoApprover implements Approver {
  decide(p: PreflightedPlan): Promise<Decision> {
    return Promise.resolve({
      decision: "approved",
      plan: p.plan,
      planHash: p.hash,
      decidedBy: "sim-eval auto-approval",
    });
  }
}
