/**
 * `deno task test:loaded [RUNS] [BUSY] [PATH…]`: the whole suite (or only
 * the test files and directories named) RUNS times in a row (default 3)
 * with BUSY CPU-bound processes beside it (default 2), as on a shared
 * machine. A test that races the clock fails here long before it fails in
 * CI. Ends with one line per run and `N passed, M failed` over all runs;
 * exits 1 when any run failed.
 *
 * @module
 */

const [runsArg, busyArg, ...paths] = Deno.args;
const runs = Number(runsArg ?? 3);
const busy = Number(busyArg ?? 2);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(busy) || busy < 0) {
  console.error("usage: deno task test:loaded [RUNS ≥ 1] [BUSY ≥ 0] [PATH…]");
  Deno.exit(2);
}

// Each burner spins until its stdin closes: when this program ends, however it ends, they end too.
const burners = Array.from({ length: busy }, () =>
  new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "Deno.stdin.read(new Uint8Array(1)).then(() => Deno.exit(0)); " +
      "const spin = () => { const t = Date.now(); while (Date.now() - t < 50); setTimeout(spin, 0); }; spin();",
    ],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn());

const runner = new URL("./run_tests.ts", import.meta.url).pathname;
let passed = 0;
let failed = 0;
const lines: string[] = [];
try {
  for (let i = 1; i <= runs; i++) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-run", "--allow-read", "--allow-env", runner, ...paths],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    await Deno.stdout.write(out.stdout);
    const m = [...text.matchAll(/^(\d+) passed, (\d+) failed$/gm)].pop();
    const p = m ? Number(m[1]) : 0;
    const f = m ? Number(m[2]) : 1;
    passed += p;
    failed += f;
    lines.push(`run ${i} of ${runs} with ${busy} busy processes: ${p} passed, ${f} failed`);
  }
} finally {
  for (const b of burners) {
    await b.stdin.close().catch(() => {});
    await b.status;
  }
}
for (const line of lines) console.log(line);
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
