/**
 * `accel-agent index [stats|refresh]`: what the device index holds, and
 * rebuilding it (and its on-disk cache) from the backend. No model needed.
 *
 * @module
 */
import type { App } from "../../app/app.ts";
import { CliError, Exit } from "../../app/exit.ts";
import type { Io } from "../../app/io.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";

export async function runIndex(
  app: App,
  action: "stats" | "refresh",
  json: boolean,
  io: Io,
): Promise<number> {
  const service = app.devices;
  if (!service) {
    // Only EPICS without a name service has none: the gateway cannot list its PVs.
    throw new CliError(
      `the device index has no source: set [epics] channelfinder_url (or archiver_url) ` +
        "for one; until then search with * ? patterns",
      Exit.FAILURE,
    );
  }
  let stats;
  try {
    if (action === "refresh") await service.refresh();
    stats = await service.stats();
  } catch (e) {
    // A name service that fails (not listening, pages it cannot serve in order, more names than
    // allowed) or a cache that cannot be written (a full disk): one line, what failed and why.
    const what = action === "refresh" ? "refreshed" : "read";
    throw new CliError(
      `the device index could not be ${what}: ${errorMessage(e).split("\n")[0]}`,
      Exit.FAILURE,
    );
  }
  if (json) {
    io.out(`${terminalJson(stats)}\n`);
    return Exit.OK;
  }
  const lines = [
    ["source", stats.source],
    ["devices", String(stats.devices)],
    ["terms", String(stats.terms)],
    ["postings", String(stats.postings)],
    ["built", stats.builtAt],
    [stats.origin === "cache" ? "loaded from cache in" : "built in", `${stats.ms} ms`],
    [
      "cache",
      stats.cacheFile
        ? `${stats.cacheFile}${
          stats.cacheBytes !== undefined ? ` (${stats.cacheBytes} bytes)` : " (not written)"
        }`
        : "off",
    ],
  ];
  for (const [k, v] of lines) io.out(`${k}: ${untrusted(v ?? "")}\n`);
  return Exit.OK;
}
