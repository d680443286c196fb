/**
 * `deno task agent|start`: runs `main.ts` with the grants the configuration
 * calls for (see `src/app/permissions.ts`): reads of the files and
 * directories it names, writes of its state, cache and work directories,
 * its own environment variables, its hosts, its own runtime, and nothing
 * else. Arguments, stdin, the terminal and the exit code pass through; the
 * launcher itself only reads the config.
 *
 * @module
 */
import { commandFiles, commandWrites } from "./src/cli/args/command_files.ts";
import { computeGrants, fallbackGrants, GrantError, grantFlags } from "./src/app/permissions.ts";
import { loadConfig } from "./src/config/mod.ts";

const MAIN = new URL("./main.ts", import.meta.url).pathname;

/** `--config FILE`, `--config=FILE`, `-c FILE` among the arguments. */
function configArg(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--config" || a === "-c") return args[i + 1];
    if (a.startsWith("--config=")) return a.slice("--config=".length);
  }
  return undefined;
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
    const { errorJson, wantsJson } = await import("./src/cli/term/json_error.ts");
    const asked = wantsJson(Deno.args);
    if (asked.json) {
      await Deno.stdout.write(
        new TextEncoder().encode(
          errorJson({ message, kind: "config", code: 2, stream: asked.stream }),
        ),
      );
    }
    Deno.exit(2);
  }
  // A bad config: main.ts reports it in its one-line (or JSON) form, reading only the file.
  flags = grantFlags(fallbackGrants(configArg(Deno.args) ?? env("ACCEL_AGENT_CONFIG"), cwd));
}

const child = new Deno.Command(Deno.execPath(), {
  args: ["run", ...flags, MAIN, ...Deno.args],
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();

// Ctrl-C in a terminal reaches the whole process group, the child included:
// forwarding it too would count as a second Ctrl-C. Without a terminal
// (kill -INT from a script) the child hears it only through us.
const stdinIsTerminal = Deno.stdin.isTerminal();
Deno.addSignalListener("SIGINT", () => {
  if (!stdinIsTerminal) child.kill("SIGINT");
});
// SIGTERM and SIGHUP stop a plan as SIGINT does, and a second one changes nothing, so they are
// always passed on: the launcher must never end first and leave the program without its signal.
Deno.addSignalListener("SIGTERM", () => child.kill("SIGTERM"));
Deno.addSignalListener("SIGHUP", () => child.kill("SIGHUP"));

const status = await child.status;
Deno.exit(status.code);
