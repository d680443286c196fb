/** The conformance suite on the TANGO adapter against a real TangoTest behind the REST bridge. */
import { basicAuth } from "../../../src/adapters/http.ts";
import { createTango } from "../../../src/adapters/tango/mod.ts";
import { HAS_TANGO, startTango } from "../../support/facility/tango_server.ts";
import { conformance } from "../conformance.ts";

conformance("tango", async () => {
  const server = await startTango();
  const cs = createTango({
    restUrl: server.restUrl,
    tangoHost: server.tangoHost,
    authorization: basicAuth((n) => server.env[n], "TANGO_REST_USER", "TANGO_REST_PASSWORD"),
    timeoutMs: 5000,
  });
  return {
    cs,
    readable: ["sys/tg_test/1/double_scalar", "sys/tg_test/1/string_scalar", "sys/tg_test/1/State"],
    broken: "sys/tg_test/1/throw_exception",
    writable: {
      device: "sys/tg_test/1/string_scalar",
      values: ["hello operator", "Default string"],
    },
    readOnly: "sys/tg_test/1/short_scalar_ro",
    search: { pattern: "sys/tg_test/1/*scalar*", min: 10 },
    [Symbol.asyncDispose]: () => server.close(),
  };
  // CI installs TangoTest; elsewhere its absence skips rather than fails.
}, !HAS_TANGO && !Deno.env.get("CI"));
