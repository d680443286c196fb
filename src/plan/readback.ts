/**
 * Which device confirms a write. Reading a setpoint back only shows the
 * setpoint was accepted; a write is *confirmed* when its readback device
 * (the power supply's measured current, the gap encoder, the attribute's
 * read value) comes within tolerance. The partner, first found wins:
 *
 * 1. the limits entry's `readback = "NAME"` (that device must be readable),
 *    or `readback = false` (none: do not look);
 * 2. the device catalogue (`DeviceInfo.readback`): the simulator's `:RDBK`
 *    signals, and on TANGO a read-write attribute itself, whose read value
 *    is compared with the value set;
 * 3. naming conventions, each candidate checked by reading it (a read that
 *    fails is no partner): `X:SETPT`, `X:SP`, `X:SET` → `X:RDBK`, `X:RB`;
 *    `X-SP` → `X-RB`; `X_SP` → `X_RB`; any other name N → `N:RDBK`, `N:RB`,
 *    `N-RB`, `N_RB` (TANGO names: only the `_RB`/`-RB` forms, lower case).
 *
 * With none, the write's result says "setpoint accepted, no readback
 * device", never "confirmed".
 *
 * A candidate that does not answer within {@link PROBE_MS} is taken as
 * absent (on EPICS a missing PV never answers; waiting the whole read
 * timeout for each would hold every plan for seconds), and what a probe
 * found is kept for {@link PROBE_TTL_MS} per control system, so the
 * executor's second preflight does not probe again.
 *
 * @module
 */
import type { ControlReader, DeviceInfo } from "../adapters/adapter.ts";
import type { LimitEntry } from "../safety/limits.ts";
import { timeoutSignal } from "../util/misc.ts";
import type { ReadbackPartner } from "../plan_model/preflighted.ts";
import type { DeviceNaming } from "../adapters/device_names.ts";

/** The result's words for a write confirmed (or not) by a partner. */
export function partnerText(p: ReadbackPartner | undefined): string {
  if (!p?.device) return "no readback device";
  return p.readValue ? `${p.device} (its read value)` : p.device;
}

const SETPOINT_SUFFIX = /^(.*?)([:_-])(SETPT|SETPOINT|SP|SET)$/i;

/** Readback names the conventions suggest for `name`, most likely first; never `name` itself. */
export function conventionCandidates(name: string): string[] {
  const tango = name.includes("/");
  // TANGO attribute names are mostly lower case; their readbacks follow the name's case.
  const up = (s: string) => (tango && name === name.toLowerCase() ? s.toLowerCase() : s);
  const m = SETPOINT_SUFFIX.exec(name);
  const out = !m
    ? [`${name}:${up("RDBK")}`, `${name}:${up("RB")}`, `${name}-${up("RB")}`, `${name}_${up("RB")}`]
    : m[2] === ":"
    ? [`${m[1]}:${up("RDBK")}`, `${m[1]}:${up("RB")}`]
    : [`${m[1]}${m[2]}${up("RB")}`];
  return out.filter((n) => n !== name && !(tango && n.slice(name.lastIndexOf("/")).includes(":")));
}

/** One written device: its catalogue entry and limits entry. */
export interface WrittenDevice {
  info: DeviceInfo;
  limit: LimitEntry | undefined;
}

/**
 * The readback partner of every written device, and the problems that
 * forbid writing one (a partner named in the limits or the catalogue that
 * cannot be read). One read batch checks every candidate.
 */
export async function findReadbacks(
  cs: ControlReader,
  written: WrittenDevice[],
  defaultSettleMs: number,
  signal?: AbortSignal,
  naming?: DeviceNaming,
): Promise<{ partners: Record<string, ReadbackPartner>; problems: Record<string, string> }> {
  const named: Named = new Map();
  const guesses = new Map<string, string[]>();
  const partners: Record<string, ReadbackPartner> = {};
  const problems: Record<string, string> = {};
  const settle = (w: WrittenDevice) =>
    w.limit?.settle_s !== undefined ? w.limit.settle_s * 1000 : defaultSettleMs;
  for (const w of written) {
    const device = w.info.device;
    const base = { settleMs: settle(w) };
    const fromLimits = w.limit?.readback;
    if (fromLimits === false) {
      partners[device] = { ...base, device: null, readValue: false, source: "limits" };
    } else if (typeof fromLimits === "string") {
      named.set(device, { device: fromLimits, source: "limits" });
    } else if (w.info.readback === device) {
      partners[device] = { ...base, device, readValue: true, source: "catalogue" };
    } else if (w.info.readback) {
      named.set(device, { device: w.info.readback, source: "catalogue" });
    } else {
      // Only names the control system writes as they are: nothing is probed under an alias.
      guesses.set(device, conventionCandidates(device).filter((n) => isCanonical(n, naming)));
    }
  }
  refuseMisnamed(named, problems, naming);
  const namedDevices = [...new Set([...named.values()].map((n) => n.device))];
  const [readings, exists] = await Promise.all([
    namedDevices.length ? cs.read(namedDevices, signal) : Promise.resolve([]),
    probe(cs, [...new Set([...guesses.values()].flat())], signal),
  ]);
  const readable = new Map(readings.map((r) => [r.device, r]));
  for (const w of written) {
    const device = w.info.device;
    if (problems[device]) continue;
    const base = { settleMs: settle(w) };
    const n = named.get(device);
    if (n) {
      const r = readable.get(n.device);
      if (r?.ok) {
        partners[device] = { ...base, device: n.device, readValue: false, source: n.source };
      } else {
        const where = n.source === "limits" ? "the limits entry" : "the device catalogue";
        problems[device] =
          `cannot read ${n.device}, the readback device ${where} names for ${device} ` +
          `(${r?.error ?? "no value"}); a write to it could not be confirmed`;
      }
      continue;
    }
    const found = guesses.get(device)?.find((c) => exists.get(c));
    if (found) {
      partners[device] = { ...base, device: found, readValue: false, source: "convention" };
    } else if (!partners[device]) {
      partners[device] = { ...base, device: null, readValue: false, source: "none" };
    }
  }
  return { partners, problems };
}

/** A partner named by the limits or the catalogue, and where the name came from. */
type Named = Map<string, { device: string; source: "limits" | "catalogue" }>;

/**
 * Named partners are read as the control system names them (TANGO's
 * catalogue spells attributes its own way); one it refuses cannot confirm,
 * and the setpoint under another name is the setpoint: each becomes a
 * problem and leaves `named`.
 */
function refuseMisnamed(
  named: Named,
  problems: Record<string, string>,
  naming: DeviceNaming | undefined,
): void {
  for (const [device, n] of named) {
    const c = naming?.canonical(n.device);
    if (c?.ok) n.device = c.name;
    const why = c && !c.ok
      ? c.error
      : n.device === device
      ? `${n.device} is ${device} itself: reading a setpoint back confirms nothing`
      : undefined;
    if (!why) continue;
    const where = n.source === "limits" ? "the limits entry" : "the device catalogue";
    problems[device] = `the readback device ${where} names for ${device} cannot stand: ${why}`;
    named.delete(device);
  }
}

function isCanonical(name: string, naming: DeviceNaming | undefined): boolean {
  const c = naming?.canonical(name);
  return !c || (c.ok && c.name === name);
}

/** How long a naming-convention candidate has to answer before it is taken as absent. */
export const PROBE_MS = 1500;
/** How long what a probe found is kept. */
export const PROBE_TTL_MS = 60_000;

const probed = new WeakMap<ControlReader, Map<string, { exists: boolean; at: number }>>();

/**
 * Whether each candidate exists: read one by one in parallel, each within
 * {@link PROBE_MS}; a read that fails or does not answer in time means no.
 */
async function probe(
  cs: ControlReader,
  names: string[],
  signal?: AbortSignal,
): Promise<Map<string, boolean>> {
  let known = probed.get(cs);
  if (!known) probed.set(cs, known = new Map());
  const now = performance.now();
  const out = new Map<string, boolean>();
  await Promise.all(names.map(async (name) => {
    const hit = known.get(name);
    if (hit && now - hit.at < PROBE_TTL_MS) return out.set(name, hit.exists);
    const limit = timeoutSignal(PROBE_MS);
    let exists = false;
    try {
      const [r] = await cs.read([name], signal ? AbortSignal.any([signal, limit]) : limit);
      exists = r?.ok === true;
    } catch (e) {
      if (signal?.aborted) throw e;
    }
    out.set(name, exists);
    known.set(name, { exists, at: performance.now() });
  }));
  return out;
}
