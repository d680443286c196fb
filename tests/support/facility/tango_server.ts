/**
 * A real TANGO device for tests: Debian's TangoTest without a database, and
 * the REST bridge (tango_rest_bridge.py, PyTango) in front of it. Both run
 * under a watcher that ends them when our stdin to them closes, so they stop
 * even when the test process dies; `close()` stops them at once.
 *
 * @module
 */

export const TANGO_TEST_BIN = "/usr/lib/tango/TangoTest";
/** Debian's interpreter: the one PyTango is built for. */
export const PYTHON = "/usr/bin/python3";
const BRIDGE = new URL("./tango_rest_bridge.py", import.meta.url).pathname;

/** True when TangoTest and PyTango are installed (CI installs them). */
export const HAS_TANGO = (() => {
  try {
    Deno.statSync(TANGO_TEST_BIN);
    return new Deno.Command(PYTHON, {
      args: ["-c", "import tango"],
      stdout: "null",
      stderr: "null",
    })
      .outputSync().success;
  } catch {
    return false;
  }
})();

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function waitForPort(port: number, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`TangoTest did not listen on 127.0.0.1:${port} within ${ms} ms`);
}

export class TangoServer implements AsyncDisposable {
  readonly user = "tango-cs";
  readonly password = "tango";
  constructor(
    readonly tangoPort: number,
    readonly restPort: number,
    private readonly children: Deno.ChildProcess[],
  ) {}

  get restUrl(): string {
    return `http://127.0.0.1:${this.restPort}/tango/rest`;
  }

  get tangoHost(): string {
    return `127.0.0.1:${this.tangoPort}`;
  }

  /** A config file's text selecting the TANGO adapter on this server. */
  config(): string {
    return `[facility]\nadapter = "tango"\n\n[tango]\nrest_url = "${this.restUrl}"\n` +
      `tango_host = "${this.tangoHost}"\nusername_env = "TANGO_REST_USER"\n` +
      `password_env = "TANGO_REST_PASSWORD"\ntimeout_ms = 5000\n`;
  }

  /** The environment holding the credentials the config names. */
  get env(): Record<string, string> {
    return { TANGO_REST_USER: this.user, TANGO_REST_PASSWORD: this.password };
  }

  async close(): Promise<void> {
    await stopAll(this.children);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Starts TangoTest (`sys/tg_test/1`, no database) and the REST bridge. */
export async function startTango(): Promise<TangoServer> {
  const tangoPort = freePort();
  // The shell keeps its stdin (our pipe): when it closes, TangoTest is killed.
  const tangoTest = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      `${TANGO_TEST_BIN} test -nodb -ORBendPoint giop:tcp:127.0.0.1:${tangoPort} -dlist sys/tg_test/1 ` +
      `</dev/null >/dev/null 2>&1 & p=$!; trap 'kill $p 2>/dev/null; wait $p' EXIT; read _ ; exit 0`,
    ],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const children = [tangoTest];
  try {
    await waitForPort(tangoPort, 60_000);
    const server = new TangoServer(tangoPort, 0, children);
    const bridge = new Deno.Command(PYTHON, {
      args: [
        BRIDGE,
        "--tango-port",
        String(tangoPort),
        "--devices",
        "sys/tg_test/1",
        "--user",
        server.user,
        "--password",
        server.password,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    children.push(bridge);
    const reader = bridge.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/listening \d+/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the TANGO REST bridge exited before listening");
      text += value;
    }
    reader.releaseLock();
    bridge.stdout.cancel().catch(() => {});
    const restPort = Number(/listening (\d+)/.exec(text)?.[1]);
    return new TangoServer(tangoPort, restPort, children);
  } catch (e) {
    await stopAll(children);
    throw e;
  }
}

/** Closing stdin ends both watchers (and so TangoTest); SIGKILL if one lingers. */
async function stopAll(children: Deno.ChildProcess[]): Promise<void> {
  await Promise.all(children.map(async (c) => {
    await c.stdin.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        c.kill("SIGKILL");
      } catch { /* gone */ }
    }, 10_000);
    await c.status;
    clearTimeout(timer);
  }));
}
