/**
 * accel-agent: a terminal assistant for particle-accelerator control rooms.
 * The program exits here and nowhere else.
 *
 * @module
 */
import { VERSION } from "./src/version.ts";
import { watchEarlySignals } from "./src/cli/early_signals.ts";

if (import.meta.main) {
  const args = Deno.args;
  // Under --json, a signal while the program loads still gives one JSON object (before any import).
  const signals = args[0] === "__accel_sandbox_process" ? undefined : watchEarlySignals(args);
  // Answer --version before loading anything else: scripts call it to probe.
  const version = args.filter((a) => a !== "--no-color");
  if (version.length === 1 && (version[0] === "--version" || version[0] === "-V")) {
    console.log(`accel-agent ${VERSION}`);
    Deno.exit(0);
  }
  // The compiled executable starts itself as the Python sandbox process (see src/sandbox).
  if (args[0] === "__accel_sandbox_process") {
    await (await import("./src/sandbox/process_main.ts")).sandboxProcess();
  }
  // A search by words with an unchanged configuration is answered from the cached index
  // before the rest of the program loads; anything else (or any doubt) takes the full path.
  if (args.includes("search")) {
    const code = await (await import("./src/cli/quick_search.ts")).quickSearch(args);
    if (code !== undefined) Deno.exit(code);
  }
  const { main } = await import("./src/cli/main.ts");
  Deno.exit(await main(args, signals));
}
