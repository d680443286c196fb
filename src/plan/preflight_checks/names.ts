/**
 * `device_name`: every device a plan names (read, written, scanned, in its
 * actions and its rollback) is named as the control system writes it. An
 * alias of one channel (`X.VAL`, a TANGO name in capitals, a `tango://`
 * prefix naming the configured host) is rewritten to that channel's one
 * name; any other name the control system would resolve elsewhere is
 * refused, with what to write instead. Everything after preflight — the
 * limits, the approval table, the hash, the writer, the readback and the
 * audit — then sees the name the wire writes.
 *
 * @module
 */
import type { DeviceNaming } from "../../adapters/device_names.ts";
import type { Action, Plan } from "../../plan_model/plan.ts";
import type { Violation } from "../../plan_model/preflighted.ts";

/** The plan with every name canonical, and the names that cannot be. */
export function canonicalPlan(
  plan: Plan,
  naming: DeviceNaming,
): { plan: Plan; violations: Violation[] } {
  const violations: Violation[] = [];
  const reported = new Set<string>();
  const name = (where: string, device: string): string => {
    const c = naming.canonical(device);
    if (c.ok) return c.name;
    if (!reported.has(device)) {
      reported.add(device);
      violations.push({ check: "device_name", where, device, message: c.error });
    }
    return device;
  };
  const actions = (list: Action[], key: string) =>
    list.map((a, i) => canonicalAction(a, (d) => name(`${key}[${i}]`, d)));
  const out: Plan = { ...plan, actions: actions(plan.actions, "actions") };
  if (plan.rollback) out.rollback = actions(plan.rollback, "rollback");
  return { plan: out, violations };
}

function canonicalAction(a: Action, name: (device: string) => string): Action {
  switch (a.type) {
    case "read":
      return { ...a, devices: a.devices.map(name) };
    case "write":
      return { ...a, device: name(a.device) };
    case "wait":
      return a;
    case "scan":
      return { ...a, writeDevice: name(a.writeDevice), readDevices: a.readDevices.map(name) };
  }
}
