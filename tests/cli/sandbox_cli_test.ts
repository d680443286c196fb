/**
 * `exec` and `scripts`, end to end: the real program starts the real
 * sandbox process. Also the model calling execute_code through `ask`.
 */
import assert from "node:assert/strict";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { ROOT, runAgent } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

const FAKE_KEY = "sk-test-FAKE-KEY-from-the-agent-env-777";

/**
 * A config with a data directory holding orbit.csv, and the shipped scripts;
 * its directory (with the runs' work directories) is removed when disposed.
 * The model's tool calls get ample time: the first sandbox process of a
 * fresh HOME makes its memory snapshot inside the call (seconds, far more
 * on a busy machine).
 */
async function sandboxConfig(): Promise<
  { config: string; dataDir: string } & AsyncDisposable
> {
  const tmp = await tempDir("accel-agent-cli-sbx-");
  const dir = tmp.path;
  const dataDir = `${dir}/data`;
  await Deno.mkdir(dataDir);
  await Deno.writeTextFile(
    `${dataDir}/orbit.csv`,
    "bpm,x_mm,y_mm\nB1,0.1,-0.2\nB2,-0.3,0.1\nB3,0.2,0.05\n",
  );
  const config = `${dir}/config.toml`;
  await Deno.writeTextFile(
    config,
    `[agent]\ntool_timeout_s = 3600\n[sandbox]\ndata_dirs = ["data"]\nscripts_dir = "${ROOT}/scripts"\n` +
      `work_dir = "work"\ntimeout_s = 120\n`,
  );
  return { config, dataDir, [Symbol.asyncDispose]: () => tmp[Symbol.asyncDispose]() };
}

Deno.test("exec runs a file, prints its output and lists the files it wrote", async () => {
  await using sbx = await sandboxConfig();
  const { config } = sbx;
  await using tmp = await tempDir();
  const file = `${tmp.path}/stats.py`;
  await Deno.writeTextFile(
    file,
    "import csv, statistics\nxs = [float(r['x_mm']) for r in csv.DictReader(open(DATA_DIR + '/orbit.csv'))]\n" +
      "print(round(statistics.pstdev(xs), 4))\nopen(WORK_DIR + '/x.txt', 'w').write(str(xs))\n",
  );
  const r = await runAgent(["exec", file, "--config", config]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "0.2160\n".replace("0.2160", "0.216"));
  assert.match(
    r.stderr,
    /^accel-agent: wrote x\.txt \(16 bytes\): \/.*\/work\/run-[^/]+\/work\/x\.txt$/m,
  );
});

Deno.test("exec - --json reads stdin and prints the result; a Python error exits 1", async () => {
  await using sbx = await sandboxConfig();
  const { config } = sbx;
  const ok = await runAgent(["exec", "-", "--json", "--config", config], {
    stdin: "print(2 ** 10)\n",
  });
  assert.equal(ok.code, 0, ok.stderr);
  const out = JSON.parse(ok.stdout);
  assert.equal(out.ok, true);
  assert.equal(out.stdout, "1024\n");
  const bad = await runAgent(["exec", "-", "--config", config], { stdin: "1 / 0\n" });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^accel-agent: ZeroDivisionError: division by zero$/m);
});

Deno.test("the agent's API key is invisible to exec'd code, however it looks", async () => {
  await using sbx = await sandboxConfig();
  const { config } = sbx;
  const code = [
    "import os",
    "print(dict(os.environ))",
    // Aliased past the static check on purpose: the runtime is the boundary.
    "js = __import__('j' + 's')",
    "Deno, process = js.Deno, js.process",
    "for probe in (lambda: Deno.env.get('OPENAI_API_KEY'), lambda: Deno.env.toObject(),",
    "              lambda: Deno.readTextFileSync('/proc/self/environ'),",
    "              lambda: dict(process.env.to_py())):",
    "    try:",
    "        print(probe())",
    "    except BaseException as e:",
    "        print('refused:', type(e).__name__)",
  ].join("\n");
  const r = await runAgent(["exec", "-", "--config", config], {
    stdin: code,
    env: { OPENAI_API_KEY: FAKE_KEY },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes(FAKE_KEY), r.stdout);
  assert.ok(!r.stdout.includes("sk-test"), r.stdout);
  assert.ok((r.stdout.match(/refused:/g) ?? []).length >= 3, r.stdout);
});

Deno.test("exec --timeout stops a busy loop with one line and exit 1", async () => {
  await using sbx = await sandboxConfig();
  const { config } = sbx;
  const r = await runAgent(["exec", "-", "--timeout", "1", "--config", config], {
    stdin: "while True:\n    pass\n",
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^accel-agent: stopped by the time limit of 1 s$/m);
});

Deno.test("exec refuses a control-system client import before running anything", async () => {
  const r = await runAgent(["exec", "-"], { stdin: "import epics\nepics.caput('X', 1)\n" });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "accel-agent: not run: import epics: control-system clients are not available: use the agent's tools to read devices\n",
  );
});

Deno.test("scripts list shows descriptions; scripts run passes arguments", async () => {
  await using sbx = await sandboxConfig();
  const { config } = sbx;
  const list = await runAgent(["scripts", "list", "orbit", "--json", "--config", config]);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(JSON.parse(list.stdout).scripts.map((s: { name: string }) => s.name), [
    "orbit_rms",
  ]);
  const run = await runAgent([
    "scripts",
    "run",
    "orbit_rms",
    "orbit.csv",
    "x_mm",
    "--config",
    config,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^x_mm +3 +0\.0000 +0\.2160 +0\.2160 +B2 \(0\.3000\)$/m);
  assert.doesNotMatch(run.stdout, /y_mm/);
  assert.match(run.stderr, /wrote orbit_rms\.json/);
  const missing = await runAgent(["scripts", "run", "nope", "--config", config]);
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /^accel-agent: no script "nope" in the scripts directory; scripts: /,
  );
});

Deno.test("scripts run prints a script's whole output, not the excerpt the model would read", async () => {
  await using tmp = await tempDir("accel-agent-cli-sbx-");
  const dir = tmp.path;
  await Deno.mkdir(`${dir}/scripts`);
  await Deno.writeTextFile(
    `${dir}/scripts/long.py`,
    '"""Prints 300 numbered lines."""\nfor i in range(300):\n    print(f"line {i:03d}")\n',
  );
  const config = `${dir}/config.toml`;
  await Deno.writeTextFile(
    config,
    `[agent]\ntool_output_max_chars = 500\n\n[sandbox]\nscripts_dir = "scripts"\n` +
      `work_dir = "work"\ntimeout_s = 120\n`,
  );
  const expected = Array.from({ length: 300 }, (_, i) => `line ${String(i).padStart(3, "0")}\n`);
  const run = await runAgent(["scripts", "run", "long", "--config", config]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, expected.join(""));
  const json = await runAgent(["scripts", "run", "long", "--json", "--config", config]);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout).stdout, expected.join(""));
});

Deno.test("exec and scripts usage errors exit 2 with one line", async () => {
  for (
    const [args, pattern] of [
      [["exec"], /exec needs one file of Python code, or - for stdin/],
      [["exec", "a.py", "--timeout", "0"], /--timeout "0" must be a number of seconds/],
      [["scripts", "frob"], /scripts needs list \[KEYWORD\] or run NAME/],
      [["exec", "/nonexistent/x.py"], /\/nonexistent\/x\.py: cannot read it/],
    ] as const
  ) {
    const r = await runAgent([...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  }
});

Deno.test("ask: the model's execute_code call runs in the sandbox and its output reaches the model", async () => {
  await using sbx = await sandboxConfig();
  const { config } = sbx;
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: [{
              name: "execute_code",
              arguments: {
                description: "mean horizontal orbit",
                code:
                  "import csv\nxs = [float(r['x_mm']) for r in csv.DictReader(open(DATA_DIR + '/orbit.csv'))]\nprint('mean', round(sum(xs) / len(xs), 3))",
              },
            }],
          },
        },
        {
          expect: { lastRole: "tool", toolResultIncludes: ['"stdout":"mean 0.0\\n"'] },
          respond: { text: "The mean horizontal orbit is 0.0 mm." },
        },
      ],
    },
  });
  const r = await runAgent(["ask", "--json", "--config", config, "mean orbit?"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test-key" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(llm.failures, []);
  const out = JSON.parse(r.stdout);
  assert.equal(out.tool_calls[0].name, "execute_code");
  assert.equal(out.tool_calls[0].result.ok, true);
});

Deno.test("sandbox results are summarised by their first output line and files written", async () => {
  const { summarizeResult } = await import("../../src/cli/term/render.ts");
  assert.equal(
    summarizeResult({ ok: true, stdout: "rms 0.19 mm\nmore\n", files: [{}, {}] }),
    "rms 0.19 mm (+2 files)",
  );
  assert.equal(summarizeResult({ ok: true, stdout: "" }), "no output");
  assert.equal(
    summarizeResult({ ok: false, error: "ZeroDivisionError: division by zero", stdout: "" }),
    "ZeroDivisionError: division by zero",
  );
  assert.equal(summarizeResult({ scripts: [{}], total: 1 }), "1 script");
});

Deno.test("scripts run takes arguments that look like options after --", async () => {
  const { parseInvocation } = await import("../../src/cli/args/args.ts");
  const inv = parseInvocation(["scripts", "run", "scan_fit", "--", "--x", "-1"], false);
  assert.deepEqual(inv.command, {
    kind: "scripts",
    action: "run",
    name: "scan_fit",
    args: ["--x", "-1"],
  });
  assert.deepEqual(parseInvocation(["exec", "-", "--timeout", "2.5"], false).command, {
    kind: "exec",
    file: "-",
    timeoutS: 2.5,
  });
});

Deno.test("a data directory that does not exist is a configuration error naming it", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  await Deno.writeTextFile(`${dir}/c.toml`, '[sandbox]\ndata_dirs = ["missing"]\n');
  const r = await runAgent(["exec", "-", "--config", `${dir}/c.toml`], { stdin: "print(1)" });
  assert.equal(r.code, 2);
  // Said at start, as for every path the config names, with the file and line that set it.
  assert.equal(
    r.stderr,
    `accel-agent: config error: [sandbox] data_dirs ${dir}/missing does not exist ` +
      `(set in ${dir}/c.toml:2); create it or change [sandbox] data_dirs\n`,
  );
});
