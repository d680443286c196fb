/**
 * The escape suite: code that tries to leave the sandbox, run against the
 * real runner directly — no static analysis in front — so what stops each
 * attempt is the runtime: the sandbox process's flags and empty
 * environment, and its worker's narrower permissions.
 */
import assert from "node:assert/strict";
import { cpuTicks, SNAPSHOT_PATH, startTestSandbox } from "../support/sandbox.ts";
import { ROOT } from "../support/run_agent.ts";
import { shapeRun } from "../../src/tools/sandbox_result.ts";

const FAKE_KEY = "sk-test-FAKE-KEY-must-not-leak-4242";
Deno.env.set("OPENAI_API_KEY", FAKE_KEY);

const env = await startTestSandbox();
const { sandbox } = env;
globalThis.addEventListener("unload", () => void env[Symbol.asyncDispose]());

/** Counts connections to a loopback port, to prove none arrives. */
const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const PORT = (listener.addr as Deno.NetAddr).port;
let connections = 0;
(async () => {
  for await (const conn of listener) {
    connections++;
    conn.close();
  }
})();
globalThis.addEventListener("unload", () => listener.close());

const opts = { sanitizeOps: false, sanitizeResources: false };

function attack(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ...opts, fn });
}

async function run(code: string) {
  const r = await sandbox.run({ code });
  return { ...r, all: `${r.stdout}\n${r.stderr}\n${r.error ?? ""}` };
}

/** Runs code that prints BLOCKED:<reason> for each refused attempt and LEAK:<x> otherwise. */
async function expectBlocked(code: string, times = 1): Promise<string> {
  const r = await run(code);
  assert.doesNotMatch(r.all, /LEAK/, r.all);
  assert.equal((r.stdout.match(/BLOCKED/g) ?? []).length, times, r.all);
  return r.all;
}

const TRY = (expr: string) =>
  `try:\n    print("LEAK:", str(${expr})[:80])\nexcept BaseException as e:\n    print("BLOCKED:", type(e).__name__, str(e)[:120])\n`;

attack("js fetch to a loopback server never connects", async () => {
  const before = connections;
  await expectBlocked(
    `from js import fetch\nfrom pyodide.ffi import run_sync\n${
      TRY(`run_sync(fetch("http://127.0.0.1:${PORT}/"))`)
    }`,
  );
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(connections, before);
});

attack("js Deno cannot read /etc/passwd", async () => {
  const out = await expectBlocked(
    `from js import Deno\n${TRY(`Deno.readTextFileSync("/etc/passwd")`)}`,
  );
  assert.match(out, /NotCapable|read access/);
});

attack("js Deno.env cannot read the API key", async () => {
  await expectBlocked(`from js import Deno\n${TRY(`Deno.env.get("OPENAI_API_KEY")`)}`);
});

attack("js Deno.Command cannot start a program", async () => {
  await expectBlocked(
    `from js import Deno\n${
      TRY(`Deno.Command.new("/bin/sh", {"args": ["-c", "id"]}).outputSync()`)
    }`,
  );
});

attack("js process.env does not hold the API key", async () => {
  const r = await run(
    `from js import process\ntry:\n    print(dict(process.env.to_py()))\nexcept BaseException as e:\n    print("BLOCKED", e)`,
  );
  assert.ok(!r.all.includes(FAKE_KEY), r.all);
});

attack("js require cannot load child_process", async () => {
  await expectBlocked(
    `import js\n${TRY(`js.require("child_process").execSync("id")`)}`,
  );
});

attack("js eval of Deno code is held to the same permissions", async () => {
  await expectBlocked(
    `from js import eval as js_eval\n${TRY(`js_eval("Deno.readTextFileSync('/etc/hostname')")`)}`,
  );
});

attack("js Deno.permissions.request cannot widen the grants", async () => {
  const r = await run(
    `from js import Deno\nfrom pyodide.ffi import to_js\nfrom js import Object\nprint(Deno.permissions.requestSync(to_js({"name": "net"}, dict_converter=Object.fromEntries)).state)`,
  );
  assert.doesNotMatch(r.all, /granted/, r.all);
});

attack("pyodide.http cannot reach a loopback server", async () => {
  const before = connections;
  await expectBlocked(
    `import pyodide.http\n${TRY(`pyodide.http.open_url("http://127.0.0.1:${PORT}/")`)}`,
  );
  assert.equal(connections, before);
});

attack("pyodide.ffi cannot reach the host file system", async () => {
  await expectBlocked(
    `from pyodide.ffi import JsProxy\nimport js\n${
      TRY(`js.Deno.readFileSync("${ROOT}/deno.json")`)
    }`,
  );
});

attack("open('/etc/passwd') sees no host file", async () => {
  const r = await run(TRY(`open("/etc/passwd").read()`));
  assert.doesNotMatch(r.all, /root:x:0:0/);
});

attack("the config file cannot be read by path, relative path or js", async () => {
  const config = `${ROOT}/configs/default.toml`;
  await expectBlocked(
    TRY(`open("${config}").read()`) + TRY(`open("../../..${config}").read()`) +
      `from js import Deno\n` + TRY(`Deno.readTextFileSync("${config}")`),
    3,
  );
});

attack("a state directory's audit log cannot be read", async () => {
  await expectBlocked(
    `from js import Deno\n${TRY(`Deno.readTextFileSync("${env.outsideDir}/audit.log")`)}${
      TRY(`open("${env.outsideDir}/audit.log").read()`)
    }`,
    2,
  );
});

attack("the home directory is the work directory, and the host's is out of reach", async () => {
  const home = Deno.env.get("HOME") ?? "/root";
  const r = await run(
    `import os\nprint("HOME=" + os.path.expanduser("~"))\nfrom js import Deno\n${
      TRY(`list(Deno.readDirSync("${home}"))`)
    }`,
  );
  assert.match(r.stdout, /HOME=\/work\n/);
  assert.match(r.stdout, /BLOCKED/);
});

attack("/proc/self/environ holds no host environment", async () => {
  const r = await run(
    TRY(`open("/proc/self/environ").read()`) +
      `from js import Deno\n${TRY(`Deno.readTextFileSync("/proc/self/environ")`)}`,
  );
  assert.ok(!r.all.includes(FAKE_KEY));
  assert.doesNotMatch(r.all, /LEAK.*PATH=/);
});

attack("os.environ holds only the sandbox's variables, never the API key", async () => {
  const r = await run(
    `import os\nprint(sorted(os.environ))\nprint(os.environ.get("OPENAI_API_KEY"))`,
  );
  assert.equal(r.stdout, "['DATA_DIR', 'DATA_DIRS', 'HOME', 'SCRIPTS_DIR', 'WORK_DIR']\nNone\n");
});

attack("the sandbox process itself was started without the parent's environment", async () => {
  const { pid } = await sandbox.ready();
  const environ = await Deno.readTextFile(`/proc/${pid}/environ`);
  assert.ok(!environ.includes(FAKE_KEY));
  assert.deepEqual(environ.split("\0").filter(Boolean).map((v) => v.split("=")[0]), ["DENO_DIR"]);
});

attack("writing into the data directory is refused and the file is unchanged", async () => {
  const before = await Deno.readTextFile(`${env.dataDir}/orbit.csv`);
  await expectBlocked(
    TRY(`open(DATA_DIR + "/orbit.csv", "w").write("x")`) +
      TRY(`open(DATA_DIR + "/new.txt", "w").write("x")`),
    2,
  );
  assert.equal(await Deno.readTextFile(`${env.dataDir}/orbit.csv`), before);
  await assert.rejects(Deno.stat(`${env.dataDir}/new.txt`));
});

attack("writing into the scripts directory is refused", async () => {
  await expectBlocked(TRY(`open(SCRIPTS_DIR + "/evil.py", "w").write("x")`));
  await assert.rejects(Deno.stat(`${env.scriptsDir}/evil.py`));
});

attack("writing outside WORK_DIR through js is refused", async () => {
  const target = `${env.outsideDir}/written.txt`;
  await expectBlocked(`from js import Deno\n${TRY(`Deno.writeTextFileSync("${target}", "x")`)}`);
  await assert.rejects(Deno.stat(target));
});

attack("a symlink from WORK_DIR to /etc/passwd cannot be made", async () => {
  const r = await run(`import os\n${TRY(`os.symlink("/etc/passwd", "/work/passwd")`)}`);
  assert.match(r.stdout, /BLOCKED: PermissionError/);
  assert.equal(r.files.length, 0);
});

attack("a symlink made through js Deno is refused", async () => {
  await expectBlocked(
    `from js import Deno\n${TRY(`Deno.symlinkSync("${env.outsideDir}", "${env.workRoot}/out")`)}`,
  );
  await assert.rejects(Deno.lstat(`${env.workRoot}/out`));
});

attack("a hard link of a data file into WORK_DIR is refused", async () => {
  const r = await run(`import os\n${TRY(`os.link(DATA_DIR + "/orbit.csv", "/work/orbit.csv")`)}`);
  assert.match(r.stdout, /BLOCKED/);
});

attack("a path with .. out of WORK_DIR meets the same permissions", async () => {
  await expectBlocked(
    `from js import Deno\n${TRY(`Deno.readTextFileSync("${env.workRoot}/../outside/audit.log")`)}`,
  );
});

attack("a socket cannot connect to a loopback server", async () => {
  const before = connections;
  await expectBlocked(
    `import socket\n${TRY(`socket.create_connection(("127.0.0.1", ${PORT}), timeout=1)`)}`,
  );
  assert.equal(connections, before);
});

attack("subprocess cannot start programs", async () => {
  const marker = `${env.outsideDir}/pwned`;
  await expectBlocked(`import subprocess\n${TRY(`subprocess.run(["touch", "${marker}"])`)}`);
  await assert.rejects(Deno.stat(marker));
});

attack("os.system cannot start programs", async () => {
  const marker = `${env.outsideDir}/pwned`;
  const r = await run(`import os\nprint("LEAK" if os.system("touch ${marker}") == 0 else "rc")`);
  assert.doesNotMatch(r.all, /LEAK/);
  await assert.rejects(Deno.stat(marker));
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack(
  "a busy loop is interrupted at the time limit and the interpreter stays usable",
  async () => {
    await sandbox.ready();
    const r = await sandbox.run({ code: "while True: pass", timeoutMs: 1_000 });
    assert.equal(r.timedOut, true);
    assert.match(r.error ?? "", /time limit of 1 s/);
    assert.ok(r.ms < 1_000 + 500, `${r.ms} ms`);
    assert.equal(r.killed, undefined);
    const { pid } = await sandbox.ready();
    // From half a second after the limit to a second after it, the process
    // must be idle (V8 may finish compiling in the first moments).
    await new Promise((res) => setTimeout(res, 500));
    const a = cpuTicks(pid) ?? 0;
    await new Promise((res) => setTimeout(res, 450));
    const used = (cpuTicks(pid) ?? 0) - a;
    assert.ok(used <= 2, `the sandbox used ${used} ticks after the interrupt`);
    assert.equal((await run("print(6 * 7)")).stdout, "42\n");
  },
);

attack("a loop that catches KeyboardInterrupt is killed within a second of its limit", async () => {
  const { pid } = await sandbox.ready();
  const r = await sandbox.run({
    code: "open('/work/partial.txt', 'w').write('kept')\n" +
      "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass",
    timeoutMs: 1_000,
  });
  assert.equal(r.killed, "timeout");
  assert.ok(r.ms < 2_000, `stopped after ${r.ms} ms`);
  assert.deepEqual(r.files.map((f) => f.name), ["partial.txt"], "files written before the kill");
  await new Promise((res) => setTimeout(res, 100));
  assert.equal(cpuTicks(pid), undefined, "the process is gone");
  assert.equal((await run("print('fresh')")).stdout, "fresh\n");
});

attack("the host stays responsive while the sandbox spins", async () => {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  await sandbox.run({ code: "while True: pass", timeoutMs: 1_000 });
  clearInterval(timer);
  assert.ok(worst < 100, `the host's event loop stalled ${worst.toFixed(0)} ms`);
});

attack("deep recursion is a RecursionError", async () => {
  const r = await run("def f(n):\n    return f(n + 1)\nf(0)");
  assert.match(r.error ?? "", /^RecursionError/);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("unbounded recursion past a raised limit is contained", async () => {
  const r = await run(
    "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)",
  );
  assert.equal(r.ok, false);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("a 10 GB allocation fails inside Python", async () => {
  const r = await run(`${TRY("len(bytearray(10 * 1024**3))")}${TRY("len(bytearray(10**9))")}`);
  assert.equal((r.stdout.match(/BLOCKED: (MemoryError|OverflowError)/g) ?? []).length, 2, r.all);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("memory grown in small pieces stops at the cap", async () => {
  const r = await run("chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))");
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /MemoryError|memory/);
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});

attack("a 1 GB print comes back truncated to the output cap, head and tail", async () => {
  const r = await sandbox.run({
    code:
      "import sys\nsys.stdout.write('HEAD')\nfor _ in range(1024):\n    sys.stdout.write('x' * 2**20)\nprint('TAIL')",
    timeoutMs: 30_000,
  });
  assert.ok(r.stdout.length < 4_200, `${r.stdout.length} characters`);
  assert.ok(r.stdout.startsWith("HEAD"));
  assert.ok(r.stdout.endsWith("TAIL\n"));
  assert.match(r.stdout, /\[10737\d+ characters left out\]/);
});

attack("a million output files are cut off by the time limit and the file cap", async () => {
  const r = await sandbox.run({
    code: "i = 0\nwhile i < 10**6:\n    open(f'/work/f{i}', 'w').close()\n    i += 1",
    timeoutMs: 1_500,
  });
  assert.equal(r.timedOut, true);
  assert.equal(r.files.length, 10);
  assert.ok(r.filesOmitted > 0);
  await Deno.remove(r.workDir, { recursive: true });
});

attack("each run starts with clean globals and builtins", async () => {
  await run("import builtins\nsecret = 1\nbuiltins.open = None\nbuiltins.len = lambda x: 0");
  const r = await run(`${TRY("secret")}print(len([1, 2]), open is not None)`);
  assert.match(r.stdout, /BLOCKED: NameError/);
  assert.match(r.stdout, /2 True/);
});

attack("a forged snapshot message from Python is not persisted", async () => {
  const r = await run(
    `from js import postMessage, Object, Uint8Array\nfrom pyodide.ffi import to_js\n` +
      `postMessage(to_js({"type": "ready", "ms": 0, "fromSnapshot": False, "packages": [], "snapshot": Uint8Array.new(8)}, dict_converter=Object.fromEntries))\nprint("sent")`,
  );
  assert.match(r.stdout, /sent/);
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(Deno.statSync(SNAPSHOT_PATH).size > 1_000_000, "the snapshot file is intact");
  const fresh = await startTestSandbox();
  try {
    assert.equal((await fresh.sandbox.ready()).fromSnapshot, true);
    assert.equal((await fresh.sandbox.run({ code: "print(1 + 1)" })).stdout, "2\n");
  } finally {
    await fresh[Symbol.asyncDispose]();
  }
});

attack("memory taken through js outside the WebAssembly heap gets the process killed", async () => {
  const r = await run(
    "import js\nkeep = []\nwhile True:\n    keep.append(js.Uint8Array.new(256 * 1024 * 1024).fill(1))",
  );
  assert.equal(r.killed, "memory", JSON.stringify(r));
  assert.match(r.error ?? "", /used more than 512 MB of memory/);
  assert.equal((await run("print('fresh')")).stdout, "fresh\n");
});

attack("an output file past the size cap is listed with a note, not returned", async () => {
  const r = await run(
    "open('/work/big.bin', 'wb').write(b'x' * 200_000)\nopen('/work/small.txt', 'w').write('ok')",
  );
  assert.deepEqual(r.files.map((f) => [f.name, f.bytes, f.note !== undefined]), [
    ["big.bin", 200_000, true],
    ["small.txt", 2, false],
  ]);
  const shaped = await shapeRun(r);
  const files = shaped.files as { name: string; preview?: string }[];
  assert.equal(files[0]?.preview, undefined);
  assert.equal(files[1]?.preview, "ok");
});

Deno.test({
  name: "a prewarmed interpreter starts from the memory snapshot (timing: deno task bench)",
  ...opts,
  async fn() {
    await using fresh = await startTestSandbox();
    const t = performance.now();
    fresh.sandbox.prewarm();
    const ready = await fresh.sandbox.ready();
    assert.equal(ready.fromSnapshot, true);
    assert.ok(performance.now() - t < 2_000, `${performance.now() - t} ms`);
  },
});

attack("a sleep that ignores the interrupt is killed after the grace period", async () => {
  await sandbox.ready();
  const r = await sandbox.run({ code: "import time\ntime.sleep(60)", timeoutMs: 1_000 });
  assert.equal(r.killed, "timeout");
  assert.ok(r.ms < 2_000, `${r.ms} ms`);
  assert.equal((await run("print('fresh')")).stdout, "fresh\n");
});
