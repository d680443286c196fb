/**
 * accel-agent: a terminal assistant for particle-accelerator control rooms.
 * The program exits here and nowhere else.
 *
 * @module
 */
import { VERSION } from "./src/version.ts";

if (import.meta.main) {
  const args = Deno.args;
  // Answer --version before loading anything else: scripts call it to probe.
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
    console.log(`accel-agent ${VERSION}`);
    Deno.exit(0);
  }
  const { main } = await import("./src/cli/main.ts");
  Deno.exit(await main(args));
}
