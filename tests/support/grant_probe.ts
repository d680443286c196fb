/**
 * A test-only entry point: the program (`src/cli/main.ts`) with attempts
 * made first, from inside the same process and with the same grants. A test
 * starts it as `deno run FLAGS grant_probe.ts PROBES_JSON -- ARGS…`, where
 * FLAGS are exactly the grants `accel-agent permissions` computes. Each
 * attempt's outcome (`ok` or the error's name) is printed on stderr as one
 * `GRANT-PROBE {json}` line; then the program runs ARGS as usual, so the
 * test also sees the normal command work with the same grants.
 *
 * Nothing in the shipped program imports this file: main.ts and launch.ts
 * have no hook, and `deno compile` embeds only main.ts's module graph.
 *
 * @module
 */
import { main } from "../../src/cli/main.ts";

/** One attempt: what a bug or a compromised dependency inside the agent might try. */
export type Probe =
  | { kind: "read" | "read-node" | "write" | "write-node"; path: string }
  | { kind: "env" | "env-node"; name: string }
  | { kind: "net"; url: string }
  | { kind: "run"; path: string }
  | { kind: "sys"; api: "osRelease" | "networkInterfaces" | "uid" };

/** The outcome of one probe: "ok" when it worked, else the error's name (`NotCapable`). */
export type Outcome = { probe: Probe; outcome: string; value?: string };

export async function attempt(p: Probe): Promise<{ outcome: string; value?: string }> {
  try {
    switch (p.kind) {
      case "read":
        return { outcome: "ok", value: (await Deno.readTextFile(p.path)).slice(0, 40) };
      case "read-node": {
        const fs = await import("node:fs");
        return { outcome: "ok", value: fs.readFileSync(p.path, "utf8").slice(0, 40) };
      }
      case "write":
        await Deno.writeTextFile(p.path, "written from inside the agent\n");
        return { outcome: "ok" };
      case "write-node": {
        const fs = await import("node:fs");
        fs.writeFileSync(p.path, "written from inside the agent\n");
        return { outcome: "ok" };
      }
      case "env":
        return { outcome: "ok", value: String(Deno.env.get(p.name)) };
      case "env-node": {
        const process = (await import("node:process")).default;
        return { outcome: "ok", value: String(process.env[p.name]) };
      }
      case "net": {
        const r = await fetch(p.url, { signal: AbortSignal.timeout(60_000) }); // a ceiling, not a measure
        await r.body?.cancel();
        return { outcome: "ok", value: String(r.status) };
      }
      case "run": {
        const out = await new Deno.Command(p.path, { args: ["-c", "true"] }).output();
        return { outcome: "ok", value: String(out.code) };
      }
      case "sys":
        return { outcome: "ok", value: JSON.stringify(Deno[p.api]()).slice(0, 40) };
    }
  } catch (e) {
    return { outcome: e instanceof Error ? e.name : String(e) };
  }
}

if (import.meta.main) {
  const [spec, sep, ...args] = Deno.args;
  if (spec === undefined || sep !== "--") {
    console.error("usage: grant_probe.ts PROBES_JSON -- ARGS…");
    Deno.exit(64);
  }
  const results: Outcome[] = [];
  for (const probe of JSON.parse(spec) as Probe[]) results.push({ probe, ...await attempt(probe) });
  console.error(`GRANT-PROBE ${JSON.stringify(results)}`);
  Deno.exit(await main(args));
}
