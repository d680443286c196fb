/**
 * The compiled executable's sandbox role starts with the agent's baked
 * grants (a compiled program cannot be given other flags). Before any
 * Python exists it gives up every read and write grant of the agent's that
 * it does not need: what is left covers only the Pyodide assets, the
 * mounted directories, its work directory and the snapshot's directory.
 *
 * Deno's `revoke` of a path removes the granted entries that contain it
 * (the path and its ancestors), never those below it; so the entry kept for
 * each needed path is the deepest one that covers it, and every other
 * entry is revoked unless a kept one contains it (revoking it would take
 * the kept one too, and it gives nothing the kept one does not).
 *
 * @module
 */
import { type AgentGrants, type ProcessSetup, stagingDir } from "./protocol.ts";

export type { AgentGrants } from "./protocol.ts";

/**
 * What the sandbox process itself needs (the worker gets less still): the
 * run's files are written into the staging directory beside its work
 * directory and renamed onto it, which takes reading and writing both.
 */
export function ownNeeds(setup: ProcessSetup): AgentGrants {
  const snapshotDir = setup.snapshotPath?.slice(0, setup.snapshotPath.lastIndexOf("/"));
  const opt = [setup.scriptsDir, setup.packagesDir, snapshotDir].filter((p): p is string => !!p);
  const out = [setup.workDir, stagingDir(setup.workDir)];
  return {
    read: [setup.pyodideDir, ...setup.dataDirs, ...out, ...opt],
    write: [...out, ...(snapshotDir ? [snapshotDir] : [])],
  };
}

function inside(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/** The entries of `granted` to revoke so that only those covering `needed` stay. */
export function toRevoke(granted: string[], needed: string[]): string[] {
  const kept = new Set<string>();
  for (const n of needed) {
    const covering = granted.filter((g) => inside(n, g)).sort((a, b) => b.length - a.length);
    if (covering[0] !== undefined) kept.add(covering[0]);
  }
  return granted.filter((g) => !kept.has(g) && ![...kept].some((k) => inside(g, k)));
}

/** Revokes what {@link toRevoke} names, for reads and writes; returns what it revoked. */
export async function dropAgentGrants(
  agent: AgentGrants,
  setup: ProcessSetup,
): Promise<AgentGrants> {
  const own = ownNeeds(setup);
  const dropped = { read: toRevoke(agent.read, own.read), write: toRevoke(agent.write, own.write) };
  for (const path of dropped.read) await Deno.permissions.revoke({ name: "read", path });
  for (const path of dropped.write) await Deno.permissions.revoke({ name: "write", path });
  return dropped;
}
