/**
 * `deno task demo`: the program in a terminal, replaying a recorded session
 * against the simulator, with no model endpoint or key. The model is
 * `model_server.ts` on 127.0.0.1 (given to the program as its
 * `OPENAI_BASE_URL`, so the launcher's usual grants allow exactly that
 * host); the program runs through `launch.ts` with its real grants, in a
 * pseudo-terminal; this driver types the question and presses the approval
 * key where a person would, says so on screen, and stops by itself. The
 * program's state (history, audit, scan data) goes to a temporary home that
 * is removed at the end.
 *
 * @module
 */
import { startReplayServer } from "./model_server.ts";
import { QUESTION, STEPS } from "./session.ts";

const ROOT = decodeURIComponent(new URL("..", import.meta.url).pathname).replace(/\/$/, "");
/** The longest the demo waits for any one stage to show. */
const CEILING_MS = 90_000;

const enc = new TextEncoder();
const say = (text: string) => Deno.stdout.writeSync(enc.encode(text));
const label = (text: string) => say(`\r\n\x1b[7m ${text} \x1b[0m\r\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** What the terminal showed so far, without escape sequences (the tail only). */
let screen = "";

async function until(pattern: RegExp, what: string): Promise<void> {
  const deadline = Date.now() + CEILING_MS;
  while (!pattern.test(screen)) {
    if (Date.now() > deadline) throw new Error(`the screen did not show ${what} in 90 s`);
    await sleep(50);
  }
}

async function main(): Promise<number> {
  await using model = startReplayServer(STEPS);
  const home = await Deno.makeTempDir({ dir: "/tmp", prefix: "accel-agent-demo-" });
  const size = Deno.stdout.isTerminal() ? Deno.consoleSize() : { columns: 100, rows: 40 };
  const launch = [Deno.execPath(), "run", "--allow-read", "--allow-env", "--allow-run"]
    .map(quote).join(" ") + ` ${quote(`${ROOT}/launch.ts`)}`;
  const child = new Deno.Command("script", {
    args: [
      "-qfec",
      `stty cols ${size.columns} rows ${size.rows} 2>/dev/null; exec ${launch}`,
      "/dev/null",
    ],
    cwd: ROOT,
    env: {
      HOME: home,
      // Deno's cache stays where it was, so nothing is fetched again under the temporary home.
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? home}/.cache/deno`,
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "replay",
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const keys = child.stdin.getWriter();
  const press = (text: string) => keys.write(enc.encode(text));
  const shown = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stdout) {
      Deno.stdout.writeSync(chunk);
      // deno-lint-ignore no-control-regex
      screen = (screen + dec.decode(chunk, { stream: true })).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
        .slice(-20_000);
    }
  })();
  label("replay — no model is called: a recorded session against the simulator");
  let code = 0;
  try {
    await until(/accel›/, "the prompt");
    await sleep(600);
    for (const ch of QUESTION) {
      await press(ch);
      await sleep(25);
    }
    await press("\r");
    await until(/all: run it as shown/, "the plan's approval prompt");
    await sleep(1000);
    // The prompt redraws over this line when the key arrives, so it is said again after.
    label("replay presses ↑ then Enter: run it as shown");
    await sleep(1200);
    await press("\x1b[A");
    await sleep(500);
    await press("\r");
    await until(/plan [0-9a-f]{12} approved/, "the approval");
    label("replay pressed ↑ then Enter: all: run it as shown");
    // The plan changed the machine: its logbook draft is shown with post / edit / skip.
    await until(/Replay finished[\s\S]*Logbook entry:/, "the plan's logbook draft");
    await sleep(1500);
    label("replay presses Enter: post the logbook entry");
    await sleep(800);
    await press("\r");
    await until(/posted to the simulator's logbook[\s\S]*accel›/, "the posted entry");
    await sleep(1200);
    for (const ch of "/quit") {
      await press(ch);
      await sleep(40);
    }
    await press("\r");
    const status = await Promise.race([child.status, sleep(CEILING_MS).then(() => undefined)]);
    if (!status) throw new Error("the program did not leave within 90 s of /quit");
    code = status.code;
  } catch (e) {
    label(`demo stopped: ${e instanceof Error ? e.message : String(e)}`);
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    code = 1;
  }
  await keys.close().catch(() => {});
  await child.status;
  await shown;
  await Deno.remove(home, { recursive: true }).catch(() => {});
  label(code === 0 ? "replay ended" : `replay ended with exit ${code}`);
  return code;
}

if (import.meta.main) Deno.exit(await main());
