/**
 * execute_code, run_script and list_scripts through the real registry and a
 * real sandbox, as the model calls them.
 */
import assert from "node:assert/strict";
import { createSimulator } from "../../src/adapters/simulator/mod.ts";
import { LocalPackages } from "../../src/sandbox/packages.ts";
import { createRegistry } from "../../src/tools/mod.ts";
import { startTestSandbox, type TestSandbox } from "../support/sandbox.ts";
import { fileTempDir, tempDir } from "../support/temp.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function withTools(
  fn: (
    call: (name: string, args: unknown) => Promise<Record<string, unknown>>,
    env: TestSandbox,
  ) => Promise<void>,
  extra: { packagesDir?: string } = {},
) {
  await using env = await startTestSandbox({}, extra);
  const cs = createSimulator({ seed: 1 });
  const packages = extra.packagesDir ? LocalPackages.scan(extra.packagesDir).names() : [];
  const tools = createRegistry(
    {
      cs,
      now: () => Date.now(),
      sandbox: { runner: env.sandbox, scriptsDir: env.scriptsDir, packages },
    },
    { maxOutputChars: 20_000, timeoutMs: 120_000 },
  );
  const call = async (name: string, args: unknown) => {
    const out = await tools.execute(name, JSON.stringify(args), new AbortController().signal);
    return { ...(out.result as Record<string, unknown>), tool_ok: out.ok };
  };
  try {
    await fn(call, env);
  } finally {
    await cs.close();
  }
}

Deno.test({
  name:
    "a script reading a CSV from DATA_DIR writes its statistics to WORK_DIR and the file comes back",
  ...opts,
  fn: () =>
    withTools(async (call) => {
      const r = await call("execute_code", {
        description: "RMS of the horizontal orbit",
        code: [
          "import csv, json, math",
          "rows = list(csv.DictReader(open(DATA_DIR + '/orbit.csv')))",
          "xs = [float(r['x_mm']) for r in rows]",
          "rms = math.sqrt(sum(x * x for x in xs) / len(xs))",
          "json.dump({'rms_x_mm': round(rms, 4), 'n': len(xs)}, open(WORK_DIR + '/stats.json', 'w'))",
          "print(f'rms {rms:.4f} mm over {len(xs)} BPMs')",
        ].join("\n"),
      });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.stdout, "rms 0.1936 mm over 4 BPMs\n");
      const files = r.files as { name: string; path: string; preview: string }[];
      assert.equal(files.length, 1);
      assert.equal(files[0]?.name, "stats.json");
      assert.deepEqual(JSON.parse(files[0]?.preview ?? ""), { rms_x_mm: 0.1936, n: 4 });
      assert.deepEqual(JSON.parse(await Deno.readTextFile(files[0]?.path ?? "")), {
        rms_x_mm: 0.1936,
        n: 4,
      });
    }),
});

Deno.test({
  name: "run_script passes its arguments as sys.argv",
  ...opts,
  fn: () =>
    withTools(async (call, env) => {
      await Deno.writeTextFile(
        `${env.scriptsDir}/echo_args.py`,
        '"""Echo the arguments."""\nimport sys\nprint(sys.argv)\n',
      );
      const r = await call("run_script", {
        name: "echo_args",
        args: ["orbit.csv", "--plane", "x y"],
      });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.stdout, "['/scripts/echo_args.py', 'orbit.csv', '--plane', 'x y']\n");
      const missing = await call("run_script", { name: "nope" });
      assert.equal(missing.tool_ok, false);
      assert.match(
        String(missing.error),
        /no script "nope" in the scripts directory; scripts: echo_args/,
      );
    }),
});

Deno.test({
  name: "execute_code refuses blocked imports before running and warns about unknown ones",
  ...opts,
  fn: () =>
    withTools(async (call) => {
      const blocked = await call("execute_code", {
        description: "x",
        code: "import epics\nfrom js import fetch\nimport socket as s",
      });
      assert.equal(blocked.tool_ok, false);
      assert.match(String(blocked.error), /not run: import epics: control-system clients/);
      assert.match(
        String(blocked.error),
        /import js: .*; import js\.fetch: .*; import socket: the sandbox has no network/,
      );
      const warned = await call("execute_code", { description: "x", code: "import frobnitz" });
      assert.deepEqual(warned.warnings, [
        "import frobnitz: not a known standard-library or local package",
      ]);
    }),
});

Deno.test({
  name: "an unavailable package is one line naming it and what is available",
  ...opts,
  fn: () =>
    withTools(async (call) => {
      const r = await call("execute_code", {
        description: "x",
        code: "import numpy as np\nprint(np.pi)",
      });
      assert.equal(r.ok, false);
      assert.equal(
        r.error,
        "module 'numpy' is not available in the sandbox; available: the Python standard library (with sqlite3)",
      );
    }),
});

Deno.test({
  name:
    "save_as stores a script with a docstring header that list_scripts finds, and never overwrites",
  ...opts,
  fn: () =>
    withTools(async (call, env) => {
      const r = await call("execute_code", {
        description: "Vertical orbit mean from orbit.csv",
        code:
          "import csv\nys = [float(r['y_mm']) for r in csv.DictReader(open(DATA_DIR + '/orbit.csv'))]\nprint(sum(ys) / len(ys))",
        save_as: "orbit_y_mean",
      });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.saved, `${env.scriptsDir}/orbit_y_mean.py`);
      const text = await Deno.readTextFile(`${env.scriptsDir}/orbit_y_mean.py`);
      assert.match(
        text,
        /^"""Vertical orbit mean from orbit.csv\n\nSaved by accel-agent on \d{4}-\d\d-\d\d\.\n"""\n\nimport csv/,
      );
      const listed = await call("list_scripts", { keyword: "vertical ORBIT" });
      assert.deepEqual(listed.scripts, [{
        name: "orbit_y_mean",
        description: "Vertical orbit mean from orbit.csv",
      }]);
      assert.deepEqual((await call("list_scripts", { keyword: "horizontal" })).scripts, []);
      const rerun = await call("run_script", { name: "orbit_y_mean" });
      assert.equal(rerun.stdout, "-0.0125\n");
      const again = await call("execute_code", {
        description: "y",
        code: "print(1)",
        save_as: "orbit_y_mean",
      });
      assert.match(String(again.saved), /not saved: a script "orbit_y_mean" already exists/);
      const failed = await call("execute_code", {
        description: "z",
        code: "1/0",
        save_as: "broken",
      });
      assert.equal(failed.saved, "not saved: the code failed");
      assert.equal(failed.error, "ZeroDivisionError: division by zero");
    }),
});

/** Builds a pure-Python wheel inside the sandbox itself (zipfile), so the test needs no host Python. */
const BUILD_WHEEL = `
import zipfile
with zipfile.ZipFile(WORK_DIR + "/tinystats-0.1-py3-none-any.whl", "w") as z:
    z.writestr("tinystats/__init__.py", "def mean(xs):\\n    return sum(xs) / len(xs)\\nVERSION = '0.1'\\n")
    z.writestr("tinystats-0.1.dist-info/METADATA", "Metadata-Version: 2.1\\nName: tinystats\\nVersion: 0.1\\n")
    z.writestr("tinystats-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr("tinystats-0.1.dist-info/RECORD", "")
`;

/** A packages directory holding the test's wheel, built once for the file (and removed after it). */
let wheelDir: Promise<string> | undefined;
function buildWheelDir(): Promise<string> {
  return wheelDir ??= (async () => {
    const packagesDir = fileTempDir("accel-agent-packages-");
    await using builder = await startTestSandbox();
    const built = await builder.sandbox.run({ code: BUILD_WHEEL });
    assert.equal(built.ok, true, built.stderr);
    const whl = built.files[0];
    assert.equal(whl?.name, "tinystats-0.1-py3-none-any.whl");
    await Deno.copyFile(whl.path, `${packagesDir}/${whl.name}`);
    return packagesDir;
  })();
}

Deno.test({
  name:
    "a wheel in the local packages directory loads on import, and the missing-package line lists it",
  ...opts,
  async fn() {
    const packagesDir = await buildWheelDir();
    await withTools(async (call) => {
      const r = await call("execute_code", {
        description: "x",
        code: "import tinystats\nprint(tinystats.mean([1, 2, 3, 6]), tinystats.VERSION)",
      });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.stdout, "3.0 0.1\n");
      assert.equal(r.warnings, undefined);
      const missing = await call("execute_code", { description: "x", code: "import scipy" });
      assert.match(String(missing.error), /module 'scipy' is not available .* and tinystats$/);
    }, { packagesDir });
  },
});

Deno.test({
  name: "a Pyodide lock file in the packages directory maps an import to its wheel",
  ...opts,
  async fn() {
    const built = await buildWheelDir();
    await using lockDir = await tempDir("accel-agent-lock-");
    const packagesDir = lockDir.path;
    // A file name that does not give the import name: only the lock file can.
    const fileName = "TinyStats_Dist-0.1-py3-none-any.whl";
    await Deno.copyFile(`${built}/tinystats-0.1-py3-none-any.whl`, `${packagesDir}/${fileName}`);
    await Deno.writeTextFile(
      `${packagesDir}/pyodide-lock.json`,
      JSON.stringify({
        info: { arch: "wasm32", platform: "emscripten", version: "314.0.7", python: "3.14" },
        packages: {
          "tinystats-dist": {
            name: "tinystats-dist",
            version: "0.1",
            file_name: fileName,
            install_dir: "site",
            package_type: "package",
            imports: ["tinystats"],
            depends: [],
          },
        },
      }),
    );
    await withTools(async (call) => {
      const r = await call("execute_code", {
        description: "x",
        code: "import tinystats\nprint(tinystats.mean([2, 4]))",
      });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.stdout, "3.0\n");
    }, { packagesDir });
  },
});

Deno.test({
  name: "a damaged memory snapshot is replaced and the interpreter still starts",
  ...opts,
  async fn() {
    const { PyodideSandbox, defaultPyodideDir } = await import("../../src/sandbox/mod.ts");
    const { TEST_LIMITS } = await import("../support/sandbox.ts");
    await using tmp = await tempDir("accel-agent-badsnap-");
    const dir = tmp.path;
    const snapshotPath = `${dir}/cache/pyodide.snapshot`;
    await Deno.mkdir(`${dir}/cache`);
    await Deno.writeFile(snapshotPath, new Uint8Array(4096).fill(7));
    const sandbox = new PyodideSandbox({
      pyodideDir: defaultPyodideDir(),
      dataDirs: [],
      workRoot: `${dir}/work`,
      snapshotPath,
      limits: TEST_LIMITS,
    });
    try {
      const r = await sandbox.run({ code: "print('started')" });
      assert.equal(r.stdout, "started\n", r.error);
    } finally {
      await sandbox.close();
    }
    assert.ok((await Deno.stat(snapshotPath)).size > 1_000_000, "a new snapshot was written");
  },
});
