/**
 * Tab completion at facility scale (10^5 devices): one Tab's candidates
 * from the sorted names against a plain filter over every name, and the
 * longest stall of the prompt's event loop while the first Tab loads the
 * names from the cached index, and while it builds the index (no cache),
 * each beside the whole load's or build's time.
 *
 * @module
 */
import { createApp } from "../src/app/app.ts";
import { denoIo } from "../src/app/io.ts";
import { deviceCandidates, gatherNames } from "../src/cli/repl/completion.ts";
import { atMost, type Figure } from "./figure.ts";

const PREFIXES = ["ARC0", "ARC007:", "ARC007:BPM:", "ARC007:BPM:05:", "RF:PHA", "SR"];

/** The longest gap between 5 ms ticks while `work` runs. */
async function worstStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  try {
    await work();
    await new Promise((r) => setTimeout(r, 20));
  } finally {
    clearInterval(timer);
  }
  return worst;
}

export async function replCompletionBench(): Promise<Figure[]> {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-bench-" });
  try {
    const config = `${dir}/config.toml`;
    await Deno.writeTextFile(
      config,
      `[simulator]\ndevices = 100000\n[state]\ndir = "${dir}/state"\n`,
    );
    const open = () => createApp({ config }, denoIo({ noColor: true }));
    // The first Tab with no cache: the index is built behind the prompt (and its cache written,
    // which the measured loads below read).
    const first = await open();
    const built = performance.now();
    const buildStall = await worstStall(async () => {
      await gatherNames((await first.devices!.index()).nameChunks());
    });
    const buildMs = performance.now() - built;
    await first.close();
    const stall: number[] = [];
    const load: number[] = [];
    let names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const app = await open();
      const t = performance.now();
      stall.push(
        await worstStall(async () => {
          // As the REPL's first Tab does: the names slice by slice from the cached index.
          names = await gatherNames((await app.devices!.index()).nameChunks());
        }),
      );
      load.push(performance.now() - t);
      await app.close();
    }
    const tab: number[] = [];
    const scan: number[] = [];
    for (let rep = 0; rep < 20; rep++) {
      for (const p of PREFIXES) {
        let t = performance.now();
        deviceCandidates(names, p);
        tab.push(performance.now() - t);
        t = performance.now();
        names.filter((n) => n.startsWith(p));
        scan.push(performance.now() - t);
      }
    }
    return [
      atMost("Tab completion at 10^5 names vs a filter over all", tab, scan, 5),
      atMost("prompt stall while the first Tab loads 10^5 names vs the load", stall, load, 100),
      atMost(
        "prompt stall while the first Tab builds the 10^5 index (no cache) vs the build",
        [buildStall],
        [buildMs],
        250,
      ),
    ];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
