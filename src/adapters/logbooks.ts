/**
 * The logbook a configuration posts to: Olog on an EPICS facility that has
 * one (`[epics] olog_url`, credentials from the variables `[epics]
 * username_env`/`password_env` name), the simulator's own logbook, or a
 * local file under the state directory for any other facility.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";
import { FileLogbook } from "./file_logbook.ts";
import { basicAuth, readEnv } from "./http.ts";
import type { Logbook } from "./logbook.ts";

/** The simulator's logbook under a state directory. */
export function simulatorLogbook(stateDir: string): FileLogbook {
  return new FileLogbook(`${stateDir}/elog/simulator.jsonl`, "simulator");
}

/** The logbook of the configured facility. */
export async function openLogbook(
  config: Config,
  stateDir: string,
  env: (name: string) => string | undefined = readEnv,
): Promise<Logbook> {
  const e = config.epics;
  if (config.facility.adapter === "epics" && e.olog_url) {
    const { OlogLogbook } = await import("./epics/olog_post.ts");
    return new OlogLogbook({
      base: e.olog_url,
      authorization: basicAuth(env, e.username_env, e.password_env),
      timeoutMs: e.http_timeout_ms,
      maxBytes: e.olog_max_bytes,
    });
  }
  if (config.facility.adapter === "simulator") return simulatorLogbook(stateDir);
  return new FileLogbook(`${stateDir}/elog/logbook.jsonl`, "file");
}
