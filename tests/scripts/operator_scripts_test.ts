/**
 * The operator scripts shipped in scripts/, run in the real sandbox on data
 * the test writes (and, for the e-log, on the simulator's own export).
 */
import assert from "node:assert/strict";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { listScripts } from "../../src/sandbox/scripts.ts";
import { createRegistry } from "../../src/tools/mod.ts";
import { ROOT } from "../support/run_agent.ts";
import { startFileSandbox } from "../support/sandbox.ts";

const SCRIPTS = `${ROOT}/scripts`;
const env = await startFileSandbox({ timeoutMs: 10_000 }, { scriptsDir: SCRIPTS });
const opts = { sanitizeOps: false, sanitizeResources: false };

async function runScript(name: string, args: string[]) {
  const code = await Deno.readTextFile(`${SCRIPTS}/${name}.py`);
  const r = await env.sandbox.run({ code, argv: [`/scripts/${name}.py`, ...args] });
  assert.equal(r.ok, true, `${r.error}\n${r.stderr}`);
  const file = (n: string) => {
    const f = r.files.find((x) => x.name === n);
    assert.ok(f, `${n} among ${r.files.map((x) => x.name)}`);
    return Deno.readTextFile(f.path);
  };
  return { ...r, file };
}

Deno.test("every shipped script has a docstring description", async () => {
  const scripts = await listScripts(SCRIPTS);
  assert.deepEqual(scripts.map((s) => s.name), ["elog_keywords", "orbit_rms", "scan_fit"]);
  for (const s of scripts) assert.ok(s.description.length > 20, s.name);
});

Deno.test({
  name: "orbit_rms computes each plane's RMS and worst BPM and writes orbit_rms.json",
  ...opts,
  async fn() {
    const r = await runScript("orbit_rms", ["orbit.csv"]);
    const out = JSON.parse(await r.file("orbit_rms.json"));
    assert.equal(out.bpms, 4);
    // x: 0.10, -0.20, 0.30, -0.10 → rms sqrt(0.15/4), mean 0.025
    assert.equal(out.planes.x_mm.rms, 0.193649);
    assert.equal(out.planes.x_mm.mean, 0.025);
    assert.equal(out.planes.x_mm.worst, "BPM03");
    assert.equal(out.planes.y_mm.worst, "BPM01");
    assert.match(r.stdout, /^plane .*\nx_mm +4 +0\.0250 +0\.1936/m);
  },
});

Deno.test({
  name: "scan_fit recovers slope and intercept of a noiseless linear response",
  ...opts,
  async fn() {
    const rows = ["current_a,pos_mm"];
    for (let i = 0; i <= 10; i++) {
      rows.push(`${(i - 5) * 0.2},${(0.75 * (i - 5) * 0.2 - 0.1).toFixed(6)}`);
    }
    await Deno.writeTextFile(`${env.dataDir}/scan.csv`, `${rows.join("\n")}\n`);
    const r = await runScript("scan_fit", ["scan.csv", "current_a", "pos_mm"]);
    const out = JSON.parse(await r.file("scan_fit.json"));
    assert.ok(Math.abs(out.slope - 0.75) < 1e-6, String(out.slope));
    assert.ok(Math.abs(out.intercept + 0.1) < 1e-6, String(out.intercept));
    assert.equal(out.linear.r2, 1);
    assert.ok(Math.abs(out.quadratic.coefficients[2]) < 1e-6);
    assert.equal(
      (await r.file("scan_residuals.csv")).split("\n")[0],
      "current_a,pos_mm,linear_residual",
    );
    assert.match(r.stdout, /^pos_mm = 0\.75 \* current_a \+ -0\.1 {2}\(r² 1\.0000/);
  },
});

Deno.test({
  name: "elog_keywords counts words, authors and logbooks of the simulator's e-log export",
  ...opts,
  async fn() {
    const cs = createSimulator({ seed: 1 });
    const tools = createRegistry({ cs, now: () => Date.now() }, {
      maxOutputChars: 1_000_000,
      timeoutMs: 10_000,
    });
    const outcome = await tools.execute(
      "read_log",
      JSON.stringify({ source: "elog", from: "-7d", limit: 500 }),
      new AbortController().signal,
    );
    await cs.close();
    assert.equal(outcome.ok, true);
    const exported = outcome.result as { entries: { author: string; logbook: string }[] };
    await Deno.writeTextFile(`${env.dataDir}/elog.json`, JSON.stringify(exported));
    const r = await runScript("elog_keywords", ["elog.json", "5"]);
    assert.match(
      r.stdout,
      new RegExp(`^${exported.entries.length} entries, \\d+ distinct words\\n`),
    );
    const topAuthor = Object.entries(
      exported.entries.reduce<Record<string, number>>((m, e) => {
        m[e.author] = (m[e.author] ?? 0) + 1;
        return m;
      }, {}),
    ).sort((a, b) => b[1] - a[1])[0];
    assert.match(r.stdout, new RegExp(`authors: ${topAuthor?.[0]} ${topAuthor?.[1]}`));
    const csv = (await r.file("elog_keywords.csv")).trim().split("\n");
    assert.equal(csv[0], "word,count,entries");
    assert.ok(csv.length > 20);
    assert.ok(!csv.some((l) => l.startsWith("the,")), "stop words are dropped");
  },
});
