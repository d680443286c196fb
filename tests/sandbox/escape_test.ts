/**
 * The escape suite: code that tries to leave the sandbox, run against the
 * real runner directly — no static analysis in front — so what stops each
 * attempt is the runtime: the sandbox process's flags and empty
 * environment, and its worker's narrower permissions.
 */
import assert from "node:assert/strict";
import { gone, runCode, sandboxTest, startFileSandbox } from "../support/sandbox.ts";
import { ROOT } from "../support/run_agent.ts";

/** Runs fetch and Deno.connect in a worker holding the interpreter's grant. */
const GRANT_PROBE = new URL("./fixtures/grant_probe.ts", import.meta.url).pathname;

const FAKE_KEY = "sk-test-FAKE-KEY-must-not-leak-4242";
Deno.env.set("OPENAI_API_KEY", FAKE_KEY);

const env = await startFileSandbox();
const { sandbox } = env;

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

const attack = sandboxTest;
const run = (code: string) => runCode(sandbox, code);

/** Runs code that prints BLOCKED:<reason> for each refused attempt and LEAK:<x> otherwise. */
async function expectBlocked(code: string, times = 1): Promise<string> {
  const r = await run(code);
  assert.doesNotMatch(r.all, /LEAK/, r.all);
  assert.equal((r.stdout.match(/BLOCKED/g) ?? []).length, times, r.all);
  return r.all;
}

const TRY = (expr: string) =>
  `try:\n    print("LEAK:", str(${expr})[:80])\nexcept BaseException as e:\n    print("BLOCKED:", type(e).__name__, str(e)[:120])\n`;

/** A permission refusal, not a missing feature, is what stopped the attempt. */
const REFUSED = /NotCapable|Requires \w+ access/;

attack("js fetch and Deno.connect to a loopback server never connect", async () => {
  const before = connections;
  // Both return promises Python cannot await here; their refusal is shown
  // below on the worker's own grant, and here by no connection arriving,
  // even once the process that tried is gone (whatever it started ends with it).
  const { pid } = await sandbox.ready();
  const r = await run(
    `import js\nfrom pyodide.ffi import to_js\njs.fetch("http://127.0.0.1:${PORT}/")\n` +
      `js.Deno.connect(to_js({"hostname": "127.0.0.1", "port": ${PORT}}, ` +
      `dict_converter=js.Object.fromEntries))\nprint("sent")`,
  );
  assert.equal(r.stdout, "sent\n", r.all);
  assert.ok(await gone(pid), "the process that ran the code is gone");
  await new Promise((r) => setTimeout(r, 200)); // a connection it made is accepted by now
  assert.equal(connections, before);
});

attack("the interpreter worker's grant refuses fetch and Deno.connect (NotCapable)", async () => {
  // Worker permissions need --unstable-worker-options, which tests do not have.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", GRANT_PROBE, String(PORT), env.workRoot],
    stderr: "inherit",
  }).output();
  const lines = JSON.parse(new TextDecoder().decode(out.stdout)) as string[];
  assert.equal(lines.length, 2);
  for (const line of lines) assert.match(line, REFUSED);
});

attack("js Deno.listen is refused by the net permission", async () => {
  const out = await expectBlocked(
    `import js\nfrom pyodide.ffi import to_js\n${
      TRY(`js.Deno.listen(to_js({"port": 0}, dict_converter=js.Object.fromEntries))`)
    }`,
  );
  assert.match(out, REFUSED);
});

attack("js Deno cannot read /etc/passwd", async () => {
  const out = await expectBlocked(
    `from js import Deno\n${TRY(`Deno.readTextFileSync("/etc/passwd")`)}`,
  );
  assert.match(out, /NotCapable|read access/);
});

attack("js Deno.env cannot read the API key", async () => {
  const out = await expectBlocked(`from js import Deno\n${TRY(`Deno.env.get("OPENAI_API_KEY")`)}`);
  assert.match(out, REFUSED);
});

attack("js Deno.Command cannot start a program", async () => {
  const out = await expectBlocked(
    `from js import Deno, Object\nfrom pyodide.ffi import to_js\n${
      TRY(
        `Deno.Command.new("/bin/sh", to_js({"args": ["-c", "id"]}, dict_converter=Object.fromEntries)).outputSync()`,
      )
    }`,
  );
  assert.match(out, REFUSED);
});

attack("js process.env does not hold the API key", async () => {
  const r = await run(
    `from js import process\ntry:\n    print(dict(process.env.to_py()))\nexcept BaseException as e:\n    print("BLOCKED", e)`,
  );
  assert.ok(!r.all.includes(FAKE_KEY), r.all);
});

attack(
  "node's child_process and fs, reached through js.process, meet the permissions",
  async () => {
    const out = await expectBlocked(
      `import js\n${TRY(`js.process.getBuiltinModule("child_process").execSync("id")`)}${
        TRY(`js.process.getBuiltinModule("fs").readFileSync("/etc/passwd")`)
      }`,
      2,
    );
    assert.equal(out.match(/NotCapable/g)?.length, 2, out);
  },
);

attack("js eval of Deno code is held to the same permissions", async () => {
  const out = await expectBlocked(
    `from js import eval as js_eval\n${TRY(`js_eval("Deno.readTextFileSync('/etc/hostname')")`)}`,
  );
  assert.match(out, REFUSED);
});

attack("js Deno.permissions.request cannot widen the grants", async () => {
  const r = await run(
    `from js import Deno\nfrom pyodide.ffi import to_js\nfrom js import Object\nprint(Deno.permissions.requestSync(to_js({"name": "net"}, dict_converter=Object.fromEntries)).state)`,
  );
  assert.doesNotMatch(r.all, /granted/, r.all);
});

attack("pyodide.http.open_url fails (Pyodide lacks XMLHttpRequest; not a permission)", async () => {
  const before = connections;
  await expectBlocked(
    `import pyodide.http\n${TRY(`pyodide.http.open_url("http://127.0.0.1:${PORT}/")`)}`,
  );
  assert.equal(connections, before);
});

attack("js Deno cannot read the agent's own files", async () => {
  const out = await expectBlocked(`import js\n${TRY(`js.Deno.readFileSync("${ROOT}/deno.json")`)}`);
  assert.match(out, REFUSED);
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
  const vars = environ.split("\0").filter(Boolean);
  assert.deepEqual(vars.map((v) => v.split("=")[0]).sort(), [
    "DENO_DIR",
    "DENO_NO_UPDATE_CHECK",
    "NO_COLOR",
  ]);
  // The Deno cache is the run's own, inside its run directory.
  const denoDir = vars.find((v) => v.startsWith("DENO_DIR="))?.slice("DENO_DIR=".length) ?? "";
  assert.ok(denoDir.startsWith(`${env.workRoot}/run-`), denoDir);
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
  const out = await expectBlocked(
    `from js import Deno\n${TRY(`Deno.writeTextFileSync("${target}", "x")`)}`,
  );
  assert.match(out, REFUSED);
  await assert.rejects(Deno.stat(target));
});

attack("a symlink from WORK_DIR to /etc/passwd never reaches the host", async () => {
  // /work is in memory: the link may exist there, but is not copied out.
  const r = await run(`import os\n${TRY(`os.symlink("/etc/passwd", "/work/passwd")`)}`);
  assert.match(r.stdout, /BLOCKED: PermissionError|LEAK: None/);
  assert.equal(r.files.length, 0);
  await assert.rejects(Deno.lstat(`${r.workDir}/passwd`));
});

attack("a symlink made through js Deno is refused", async () => {
  const { workDir } = await sandbox.ready();
  const out = await expectBlocked(
    `from js import Deno\n${TRY(`Deno.symlinkSync("${env.outsideDir}", "${workDir}/out")`)}`,
  );
  assert.match(out, REFUSED);
  await assert.rejects(Deno.lstat(`${workDir}/out`));
});

attack("os.link fails (Pyodide has no hard links; not a permission)", async () => {
  const r = await run(`import os\n${TRY(`os.link(DATA_DIR + "/orbit.csv", "/work/orbit.csv")`)}`);
  assert.match(r.stdout, /BLOCKED/);
});

attack("a hard link of a data file into WORK_DIR through js is refused", async () => {
  const { workDir } = await sandbox.ready();
  const out = await expectBlocked(
    `from js import Deno\n${TRY(`Deno.linkSync("${env.dataDir}/orbit.csv", "${workDir}/o.csv")`)}`,
  );
  assert.match(out, REFUSED);
  await assert.rejects(Deno.lstat(`${workDir}/o.csv`));
});

attack("a path with .. out of WORK_DIR meets the same permissions", async () => {
  const out = await expectBlocked(
    `from js import Deno\n${TRY(`Deno.readTextFileSync("${env.workRoot}/../outside/audit.log")`)}`,
  );
  assert.match(out, REFUSED);
});

attack(
  "socket.create_connection fails (Pyodide has no socket backend; not a permission)",
  async () => {
    const before = connections;
    await expectBlocked(
      `import socket\n${TRY(`socket.create_connection(("127.0.0.1", ${PORT}), timeout=1)`)}`,
    );
    assert.equal(connections, before);
  },
);

attack("subprocess fails (Pyodide cannot start programs; not a permission)", async () => {
  const marker = `${env.outsideDir}/pwned`;
  await expectBlocked(`import subprocess\n${TRY(`subprocess.run(["touch", "${marker}"])`)}`);
  await assert.rejects(Deno.stat(marker));
});

attack("os.system fails (Pyodide cannot start programs; not a permission)", async () => {
  const marker = `${env.outsideDir}/pwned`;
  const r = await run(`import os\nprint("LEAK" if os.system("touch ${marker}") == 0 else "rc")`);
  assert.doesNotMatch(r.all, /LEAK/);
  await assert.rejects(Deno.stat(marker));
  assert.equal((await run("print('alive')")).stdout, "alive\n");
});
