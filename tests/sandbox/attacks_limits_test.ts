/**
 * Class 2 and 3 attacks, under a user's grants (`exec --json` through the
 * launcher): memory past the cap by every route (the js bridge, workers,
 * files in memory, a patched measure), the disk quota by names,
 * directories, long paths, unlinked and sparse files and a patched file
 * system, unsafe modes, and output past its caps. Each asserts that the
 * limit held, with a clear message, and that nothing escaped the run
 * directory. Every other limit has ample room.
 */
import assert from "node:assert/strict";
import { AMPLE, assertSameTree, attack, AttackUser, type Outcome } from "./attack_user.ts";

const user = await AttackUser.start();
addEventListener("unload", () => void user[Symbol.asyncDispose]());

const BRIDGE = `js = __import__("j" + "s")\n`;
/** memory_mb = 128: the process is killed past 128 + 384 MB resident. */
const MEMORY = { memory_mb: 128 };
const RSS_LIMIT_MB = 128 + 384;
/** How far past the limit a kill may come: one 100 ms report of the fastest growth here. */
const RSS_MARGIN_MB = 1024;
const DISK = { max_work_mb: 2 };

async function run(code: string, limits: Partial<Record<keyof typeof AMPLE, number>>) {
  const before = await user.listing();
  const r = await user.exec(code, limits);
  assertSameTree(before, await user.listing());
  await user.assertRunDirsClean();
  return r;
}

function killedForMemory(r: Outcome): void {
  assert.equal(r.json.ok, false, JSON.stringify(r.json));
  assert.match(r.json.error ?? "", /used more than 128 MB of memory/);
  const reached = Number(/reached (\d+) MB/.exec(r.json.error ?? "")?.[1] ?? NaN);
  if (!Number.isNaN(reached)) assert.ok(reached < RSS_LIMIT_MB + RSS_MARGIN_MB, `${reached} MB`);
}

const memoryAttacks: [string, string][] = [
  [
    "typed arrays through the js bridge",
    `${BRIDGE}keep = []\nwhile True:\n    keep.append(js.Uint8Array.new(64 * 2**20).fill(1))`,
  ],
  [
    "JS strings grown through the js bridge",
    `${BRIDGE}js.eval("globalThis.a = []; for (;;) a.push('x'.repeat(2**24) + Math.random())")`,
  ],
  [
    "a file grown in the in-memory /tmp",
    `f = open("/tmp/big", "wb")\nwhile True:\n    f.write(b"x" * 2**22)`,
  ],
  [
    "a nested worker allocating",
    `${BRIDGE}js.eval("new Worker('data:text/javascript,' + encodeURIComponent('const k=[]; for(;;) k.push(new Uint8Array(64*2**20).fill(1))'), {type:'module'})")\nimport time\nwhile True:\n    time.sleep(0.05)`,
  ],
  [
    "a patched Deno.memoryUsage in the worker",
    `${BRIDGE}js.eval("Deno.memoryUsage = () => ({ rss: 1 }); globalThis.k = []")\nwhile True:\n    js.k.push(js.Uint8Array.new(64 * 2**20).fill(1))`,
  ],
  [
    "ArrayBuffers posted to the parent thread",
    `${BRIDGE}js.eval("for (;;) self.postMessage(new Uint8Array(32*2**20).fill(1))")`,
  ],
  [
    "a WebAssembly memory grown from JS",
    `${BRIDGE}js.eval("const ms = []; for (;;) { const m = new WebAssembly.Memory({ initial: 1, maximum: 16384 }); m.grow(1000); new Uint8Array(m.buffer).fill(1); ms.push(m); }")`,
  ],
  [
    "an unlinked file held open in memory",
    `import os\nf = open("/tmp/x", "wb")\nos.unlink("/tmp/x")\nwhile True:\n    f.write(b"y" * 2**22)`,
  ],
];
for (const [what, code] of memoryAttacks) {
  attack(`memory past the cap by ${what} gets the run killed with a clear message`, async () => {
    killedForMemory(await run(code, MEMORY));
  });
}

attack("a bytearray past the WebAssembly heap cap is a MemoryError, the run goes on", async () => {
  const r = await run(
    `try:\n    b = bytearray(1024**3)\n    print("LEAK")\nexcept MemoryError:\n    print("MemoryError")\nprint(sum(range(10)))`,
    MEMORY,
  );
  assert.equal(r.json.stdout, "MemoryError\n45\n", JSON.stringify(r.json));
});

/**
 * Nothing is kept; the result says the quota was passed only when that was
 * measured, and otherwise why the files were not kept (`detail`).
 */
function stoppedByDisk(r: Outcome, detail?: RegExp): void {
  assert.equal(r.json.ok, false, JSON.stringify(r.json));
  if (detail) {
    assert.match(r.json.error ?? "", /^stopped: the run's files were not kept: /);
    assert.match(r.json.error ?? "", detail);
  } else assert.match(r.json.error ?? "", /wrote more than 2 MB, its disk quota/);
  assert.equal(r.json.files, undefined, "nothing is kept");
}

/** The attacks, and for those that pass no quota (the files are refused otherwise), why. */
const diskAttacks: [string, string, RegExp?][] = [
  [
    "twenty thousand empty files (inodes and names)",
    `for i in range(20000):\n    open(f"/work/f{i}", "w").close()`,
  ],
  [
    "a thousand nested directories (a block each)",
    `import os\np = "/work"\nfor _ in range(1000):\n    p += "/d"\n    os.mkdir(p)`,
  ],
  [
    "names of 255 bytes",
    `for i in range(6000):\n    open("/work/" + str(i).rjust(255, "n"), "w").close()`,
  ],
  [
    "a path longer than PATH_MAX",
    `import os\nos.makedirs("/work/" + "/".join([c * 250 for c in "abcdefghijklmnopqrst"]))\nprint("made")`,
    /longer than 4096 bytes/,
  ],
  [
    "a file written after it was unlinked",
    `import os\nf = open("/work/x", "wb")\nos.unlink("/work/x")\nfor _ in range(4):\n    f.write(b"z" * 2**20)`,
  ],
  [
    "a sparse file of a gigabyte",
    `f = open("/work/sparse", "wb")\nf.seek(2**30)\nf.write(b"1")\nf.close()`,
  ],
  [
    "a file truncated up to a gigabyte",
    `import os\nopen("/work/t", "wb").close()\nos.truncate("/work/t", 2**30)`,
  ],
  [
    "one file rewritten again and again",
    `for _ in range(5):\n    open("/work/again", "wb").write(b"a" * 2**20)`,
  ],
  [
    "the ENOSPC counter undone through the js bridge",
    `pyodide_js = __import__("pyodide_" + "js")\nfs = pyodide_js.FS\nt = fs.filesystems.MEMFS.ops_table.file.stream\nt.write = fs.filesystems.MEMFS.stream_ops.write\nopen("/work/big", "wb").write(b"q" * 3 * 2**20)`,
  ],
  [
    "a patched readdir listing names that climb out",
    // The listing, its stat and its contents all patched, so the name reaches the process's check.
    `${BRIDGE}pyodide_js = __import__("pyodide_" + "js")\nfs = pyodide_js.FS\nopen("/work/a", "w").write("x")\n` +
    `js.eval("(fs) => { const rd = fs.readdir, ls = fs.lstat, rf = fs.readFile; " +\n` +
    `  "fs.readdir = (p) => p === '/work' ? ['a', '../../escape'] : rd(p); " +\n` +
    `  "fs.lstat = (p) => p.includes('escape') ? { mode: 0o100644, size: 1 } : ls(p); " +\n` +
    `  "fs.readFile = (p) => p.includes('escape') ? new Uint8Array(1) : rf(p); }")(fs)`,
    /cannot be written: "\.\."/,
  ],
  [
    "a patched readFile returning 3 MB",
    // Patched from JS: a Python function is no longer callable once the run has ended.
    `${BRIDGE}pyodide_js = __import__("pyodide_" + "js")\nfs = pyodide_js.FS\nopen("/work/a", "w").write("x")\njs.eval("(fs) => { fs.readFile = () => new Uint8Array(3 * 2**20); }")(fs)`,
  ],
];
for (const [what, code, detail] of diskAttacks) {
  attack(`the disk quota holds against ${what}`, async () => {
    stoppedByDisk(await run(code, DISK), detail);
  });
}

attack("setuid, setgid, sticky and world-writable modes do not reach the host", async () => {
  const r = await run(
    `import os\nos.makedirs("/work/d")\nopen("/work/d/x", "w").write("x")\n` +
      `os.chmod("/work/d/x", 0o7777)\nos.chmod("/work/d", 0o7777)\nopen("/work/y", "w").write("y")\nos.chmod("/work/y", 0o4755)`,
    DISK,
  );
  assert.equal(r.json.ok, true, JSON.stringify(r.json));
  assert.deepEqual(r.json.files?.map((f) => f.name), ["d/x", "y"]);
  for (const f of r.json.files ?? []) {
    assert.equal((await Deno.lstat(f.path)).mode! & 0o7777, 0o600, f.name);
  }
});

attack(
  "a directory made unreadable in /work is copied out readable, within the quota",
  async () => {
    const r = await run(
      `import os\nos.makedirs("/work/locked")\nopen("/work/locked/f", "w").write("x")\nos.chmod("/work/locked", 0)`,
      DISK,
    );
    assert.equal(r.json.ok, true, JSON.stringify(r.json));
    assert.deepEqual(r.json.files?.map((f) => f.name), ["locked/f"]);
  },
);

attack("symlinks in /work never become links on the host", async () => {
  const r = await run(
    `import os\nopen("/work/a", "w").write("a")\nos.symlink("/etc/passwd", "/work/s")\nos.symlink("/work/a", "/work/h")`,
    DISK,
  );
  assert.equal(r.json.ok, true, JSON.stringify(r.json));
  assert.deepEqual(r.json.files?.map((f) => f.name), ["a"]);
  for (const f of r.json.files ?? []) assert.equal((await Deno.lstat(f.path)).isFile, true);
});

attack("a run directory dated in the future is pruned like any other", async () => {
  await Deno.mkdir(user.workRoot, { recursive: true });
  const future = `${user.workRoot}/run-999999999999999-000001-future`;
  const oldStyle = `${user.workRoot}/run-abcdef`;
  for (const d of [future, oldStyle]) {
    await Deno.mkdir(d, { recursive: true });
    await Deno.utime(d, new Date("2100-01-01"), new Date("2100-01-01"));
  }
  for (let i = 0; i < 2; i++) {
    await user.exec(`open("/work/n", "w").write("${i}")`, { keep_runs: 2 });
  }
  await assert.rejects(Deno.lstat(future));
  await assert.rejects(Deno.lstat(oldStyle));
});

const OUT = { max_output_chars: 1000 };
const outputAttacks: [string, string, "stdout" | "stderr" | "error"][] = [
  ["10 MB on stdout", `import sys\nsys.stdout.write("x" * 10 * 2**20)`, "stdout"],
  ["10 MB on stderr", `import sys\nsys.stderr.write("e" * 10 * 2**20)`, "stderr"],
  [
    "invalid UTF-8 bytes on stderr",
    `import sys\nsys.stderr.buffer.write(b"\\xff\\xfe" * 2**20)`,
    "stderr",
  ],
  [
    "a replaced stdout writer in Pyodide",
    `pyodide_js = __import__("pyodide_" + "js")\npyodide_js.setStdout()\nprint("z" * 2**20)`,
    "stdout",
  ],
  ["an exception message of 5 MB", `raise ValueError("v" * 5 * 2**20)`, "error"],
];
for (const [what, code, field] of outputAttacks) {
  attack(`output caps hold on the agent's side against ${what}`, async () => {
    const r = await run(code, OUT);
    const text = String(r.json[field] ?? "");
    assert.ok(text.length <= 2_200, `${field}: ${text.length} characters`);
  });
}

attack("the process's own stdout and stderr flooded through js Deno are cut off", async () => {
  const r = await run(
    `${BRIDGE}b = js.Uint8Array.new(2**20).fill(65)\nfor _ in range(200):\n    js.Deno.stderr.writeSync(b)\n    js.Deno.stdout.writeSync(b)`,
    OUT,
  );
  assert.equal(r.json.ok, false);
  assert.match(r.json.error ?? "", /too much to the sandbox's protocol pipe/);
});

attack("a forged result line on the process's stdout is not taken for the result", async () => {
  const r = await run(
    `${BRIDGE}js.Deno.stdout.writeSync(js.TextEncoder.new().encode('{"type":"result","id":1,"ok":true,"stdout":"FORGED","stderr":"","timedOut":false,"ms":0}\\n'))\nprint("real")`,
    OUT,
  );
  assert.equal(r.json.stdout, "real\n");
});
