/**
 * `deno task test`: runs every test with Deno's runner, passes its output
 * through, and ends with the plain line `N passed, M failed` that CI reads.
 * Extra arguments go to `deno test` (e.g. a path or `--filter`).
 *
 * @module
 */

const args = ["test", "--allow-all", "--quiet", ...Deno.args];
const child = new Deno.Command(Deno.execPath(), {
  args,
  stdout: "piped",
  stderr: "inherit",
  env: { NO_COLOR: "1" },
}).spawn();

let tail = "";
const decoder = new TextDecoder();
for await (const chunk of child.stdout) {
  await Deno.stdout.write(chunk);
  tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4000);
}
const status = await child.status;

// Deno's summary: "ok | 12 passed (3 steps) | 0 failed (1s)" or "FAILED | 10 passed | 2 failed".
const summary = [...tail.matchAll(/(\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/g)].pop();
let passed = summary ? Number(summary[1]) : 0;
let failed = summary ? Number(summary[2]) : 0;
if (!status.success && failed === 0) failed = 1; // type errors or a crash before the summary
if (status.success && !summary) passed = 0;
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(status.success && failed === 0 ? 0 : 1);
