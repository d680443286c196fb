/**
 * Deno grants that follow the configuration: the network grant lists only
 * the hosts of the configured model endpoints and facility services, so a
 * request anywhere else is refused by Deno itself (`NotCapable`), whatever
 * our code does. `accel-agent permissions` prints these flags; the launcher
 * (`launch.ts`, behind `deno task agent`) runs the program with them.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";

/** Where api.openai.com is, for models with no base URL of their own. */
const OPENAI_DEFAULT = "https://api.openai.com/v1";

/** Grants besides the network, as the `agent` task has always had them. */
export const BASE_GRANTS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys=hostname,osRelease,homedir,uid",
] as const;

/** `host:port` of a URL, with the scheme's default port; undefined when unparsable. */
export function hostPort(url: string): string | undefined {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === "https:" || u.protocol === "wss:" ? "443" : "80");
    return `${u.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/** Every URL the configuration may make the program contact, model first. */
export function configuredUrls(config: Config): string[] {
  const urls = [config.llm.base_url || OPENAI_DEFAULT];
  for (const entry of Object.values(config.llm.models)) {
    if (typeof entry !== "string" && entry.base_url) urls.push(entry.base_url);
  }
  if (config.facility.adapter === "epics") {
    const e = config.epics;
    urls.push(e.pvws_url, e.archiver_url, e.channelfinder_url, e.olog_url, e.alarm_logger_url);
  } else if (config.facility.adapter === "tango") {
    urls.push(config.tango.rest_url);
  }
  return urls.filter((u) => u !== "");
}

/** The hosts of {@link configuredUrls}, unique, in order. */
export function netHosts(config: Config): string[] {
  return [...new Set(configuredUrls(config).map(hostPort).filter((h) => h !== undefined))];
}

/**
 * The exact `deno run` flags for this configuration.
 *
 * @example
 * ```ts
 * grantFlags(config); // ["--allow-read", …, "--allow-net=127.0.0.1:11434,gateway:8080"]
 * ```
 */
export function grantFlags(config: Config): string[] {
  // The Python sandbox is this same runtime started again with narrower grants; nothing else runs.
  return [
    ...BASE_GRANTS,
    `--allow-run=${Deno.execPath()}`,
    `--allow-net=${netHosts(config).join(",")}`,
  ];
}
