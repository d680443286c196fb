/**
 * `deno task agent|start`: runs `main.ts` with the grants the configuration
 * calls for (see `src/app/permissions.ts`): reads of the files and
 * directories it names, writes of its state, cache and work directories,
 * its own environment variables, its hosts, its own runtime, and nothing
 * else. Arguments, stdin, the terminal and the exit code pass through; the
 * launcher itself only reads the config.
 *
 * Stop signals are heard from the launcher's first line: one that comes
 * before the program runs ends the launcher with the signal's exit code (and
 * under `--json` the one JSON object the program would have printed); one
 * that kills the program before it could listen is answered the same way.
 *
 * @module
 */

/** SIGINT, SIGTERM, SIGHUP: what they stop, and the exit code after each (128 + n). */
const STOPS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type Stop = keyof typeof STOPS;

// Listening before anything is imported: the modules below take a while to load.
const program: { child?: Deno.ChildProcess } = {};
let early: Stop | undefined;
const stdinIsTerminal = Deno.stdin.isTerminal();
for (const signal of Object.keys(STOPS) as Stop[]) {
  Deno.addSignalListener(signal, () => {
    const child = program.child;
    if (!child) {
      early ??= signal;
      return;
    }
    // Ctrl-C in a terminal reaches the whole process group, the child included:
    // forwarding it too would count as a second Ctrl-C. Without a terminal
    // (kill -INT from a script) the child hears it only through us. SIGTERM and
    // SIGHUP stop a plan as SIGINT does, and a second one changes nothing, so they are
    // always passed on: the launcher must never end first and leave the program without its signal.
    if (signal !== "SIGINT" || !stdinIsTerminal) child.kill(signal);
  });
}

const { commandFiles, commandWrites } = await import("./src/cli/args/command_files.ts");
const { computeGrants, fallbackGrants, GrantError, grantFlags } = await import(
  "./src/app/permissions.ts"
);
const { loadConfig } = await import("./src/config/mod.ts");
const { errorJson, wantsJson } = await import("./src/cli/term/json_error.ts");
const { readChain } = await import("./src/config/layers.ts");
const { readRegularText } = await import("./src/util/bounded_read.ts");
const { configFile, defaultConfigPath } = await import("./src/config/locate.ts");

// Decoded: a checkout under a directory with a space or an accented letter is found as it is named.
const MAIN = decodeURIComponent(new URL("./main.ts", import.meta.url).pathname);
const asked = wantsJson(Deno.args);

/** Ends the launcher for a stop signal the program never heard: one JSON object under `--json`. */
async function stopped(signal: Stop, when: string): Promise<never> {
  if (asked.json) {
    await Deno.stdout.write(
      new TextEncoder().encode(
        errorJson({
          message: `cancelled by ${signal} ${when}`,
          kind: "cancelled",
          code: STOPS[signal],
          stream: asked.stream,
        }),
      ),
    );
  }
  Deno.exit(STOPS[signal]);
}

/** `--config FILE`, `--config=FILE`, `-c FILE` among the arguments. */
function configArg(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--config" || a === "-c") return args[i + 1];
    if (a.startsWith("--config=")) return a.slice("--config=".length);
  }
  return undefined;
}

/** The config files of the chain the program will read, as far as they can be read. */
async function chainFiles(path: string | undefined): Promise<string[]> {
  const seen: string[] = [];
  const read = async (p: string) => {
    seen.push(p);
    try {
      // Regular files only: opening a FIFO would wait for a writer.
      return await readRegularText(p, 1 << 20);
    } catch {
      return undefined;
    }
  };
  const start = configFile({ path, env: { get: env }, cwd });
  await readChain(start, defaultConfigPath(), read, env("HOME") ?? cwd).catch(() => {});
  return seen;
}

const env = (n: string) => Deno.env.get(n);
const cwd = Deno.cwd();
let flags: string[];
try {
  const loaded = await loadConfig({ path: configArg(Deno.args), env: { get: env }, cwd });
  flags = grantFlags(
    computeGrants(loaded, {
      env,
      cwd,
      extraRead: await commandFiles(Deno.args),
      extraWrite: await commandWrites(Deno.args),
      // The operator's $VISUAL or $EDITOR edits a logbook draft (unless [elog] editor names one).
      editorFromEnvironment: true,
    }),
  );
} catch (e) {
  if (e instanceof GrantError) {
    // Said as main.ts says a config error: one line, and the JSON object under --json.
    const message = `config error: ${e.message}`;
    console.error(`accel-agent: ${message}`);
    if (asked.json) {
      await Deno.stdout.write(
        new TextEncoder().encode(
          errorJson({ message, kind: "config", code: 2, stream: asked.stream }),
        ),
      );
    }
    Deno.exit(2);
  }
  // A bad config: main.ts reports it in its one-line (or JSON) form, reading only the files of
  // its chain (as far as the launcher got: the file, what it extends, the shipped defaults).
  const named = configArg(Deno.args) ?? env("ACCEL_AGENT_CONFIG");
  flags = grantFlags(fallbackGrants(named, cwd, await chainFiles(named)));
}

if (early) await stopped(early, "before the program started");

const child = program.child = new Deno.Command(Deno.execPath(), {
  // --quiet: Deno's own notices (a module downloaded into a cold cache) are not the program's output.
  args: ["run", "--quiet", ...flags, MAIN, ...Deno.args],
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();

const status = await child.status;
// Killed by a stop signal before it could listen for it, the program printed nothing.
const killedBy = Object.keys(STOPS).find((s) => s === status.signal) as Stop | undefined;
if (killedBy) await stopped(killedBy, "while the program started");
Deno.exit(status.code);
