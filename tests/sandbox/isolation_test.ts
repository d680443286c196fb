/**
 * Findings of the sandbox security review: a run must not outlive its
 * limits, must not forge its own result, must not reach another run's files
 * or state, must not keep data outside its work directory, and must not
 * fill the disk.
 */
import assert from "node:assert/strict";
import { gone, sandboxTest, startFileSandbox } from "../support/sandbox.ts";
import { waitFor } from "../support/run_agent.ts";

const env = await startFileSandbox({ maxWorkMb: 5, keepRuns: 3 });
const { sandbox } = env;

const finding = sandboxTest;

finding("a callback scheduled for after the run dies with the run's process", async () => {
  const { pid } = await sandbox.ready();
  const r = await sandbox.run({
    code: "import asyncio\ndef spin():\n    while True: pass\n" +
      "asyncio.get_event_loop().call_later(0.2, spin)\nprint('scheduled')",
  });
  assert.equal(r.stdout, "scheduled\n");
  assert.ok(await gone(pid), "the process that ran the code is gone");
});

finding("results forged with js.postMessage are ignored; the watchdog still kills", async () => {
  const r = await sandbox.run({
    code: "import js\nfrom pyodide.ffi import to_js\n" +
      "for i in range(1, 51):\n" +
      "    js.postMessage(to_js({'type': 'result', 'id': i, 'ok': True, 'stdout': 'FORGED', " +
      "'stderr': '', 'timedOut': False, 'ms': 1}, dict_converter=js.Object.fromEntries))\n" +
      "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass",
    timeoutMs: 1_000,
  });
  assert.equal(r.ok, false);
  assert.equal(r.killed, "timeout", JSON.stringify(r));
  assert.doesNotMatch(r.stdout, /FORGED/);
});

finding("a flood on the protocol pipe is cut off and its forged lines are refused", async () => {
  const forged = '{"type":"result","id":%d,"ok":true,"stdout":"FORGED","stderr":"",' +
    '"timedOut":false,"ms":1}\\n';
  const r = await sandbox.run({
    code: `import js\nenc = js.TextEncoder.new()\nline = '${forged}'\n` +
      "for i in range(1, 200):\n    js.Deno.stdout.writeSync(enc.encode(line % i))\n" +
      "big = enc.encode('x' * 65536)\nwhile True:\n    js.Deno.stdout.writeSync(big)",
  });
  assert.equal(r.ok, false);
  assert.equal(r.killed, "output", JSON.stringify({ ...r, stdout: r.stdout.slice(0, 200) }));
  assert.doesNotMatch(r.stdout, /FORGED/);
});

finding("a run cannot read or overwrite an earlier run's files", async () => {
  const first = await sandbox.run({ code: "open('/work/secret.txt', 'w').write('run one')" });
  assert.equal(first.files.length, 1);
  const path = `${first.workDir}/secret.txt`;
  const r = await sandbox.run({
    code: "import pyodide.code\n" +
      `for js in ["Deno.readTextFileSync('${path}')", "Deno.writeTextFileSync('${path}', 'x')",` +
      ` "Deno.readDirSync('${env.workRoot}').next()"]:\n` +
      "    try:\n        print('LEAK', pyodide.code.run_js(js))\n" +
      "    except Exception as e:\n        print('BLOCKED', str(e)[:60])",
  });
  assert.doesNotMatch(r.stdout, /LEAK/, r.stdout);
  assert.equal(r.stdout.match(/BLOCKED.*(NotCapable|Requires)/g)?.length, 3, r.stdout);
  assert.equal(await Deno.readTextFile(path), "run one");
});

finding("module patches and __main__ changes do not survive into the next run", async () => {
  await sandbox.run({
    code: "import json, __main__, sys\njson.dumps = lambda *a, **k: 'PATCHED'\n" +
      "__main__.leaked = 1\nsys.modules['planted'] = json",
  });
  const r = await sandbox.run({
    code: "import json, __main__, sys\n" +
      "print(json.dumps(1), hasattr(__main__, 'leaked'), 'planted' in sys.modules)",
  });
  assert.equal(r.stdout, "1 False False\n");
});

finding("the worker has no Cache API or localStorage to keep data in", async () => {
  const r = await sandbox.run({
    code: "import pyodide.code\nprint(pyodide.code.run_js(" +
      "'[typeof caches, typeof CacheStorage, typeof localStorage, typeof sessionStorage]" +
      ".join()'))",
  });
  assert.equal(r.stdout, "undefined,undefined,undefined,undefined\n", r.error);
});

finding("the sandbox process has no Cache API or localStorage either", async () => {
  const { globalsLeft } = await import("../../src/sandbox/process_main.ts");
  assert.deepEqual(globalsLeft(), []);
});

finding("a run that writes past max_work_mb is killed and its files are not kept", async () => {
  const r = await sandbox.run({
    code: "f = open('/work/big.bin', 'wb')\nwhile True:\n    f.write(b'x' * 2**20)\n    f.flush()",
  });
  assert.equal(r.killed, "disk", JSON.stringify(r));
  assert.match(r.error ?? "", /more than 5 MB/);
  await assert.rejects(Deno.stat(`${r.workDir}/big.bin`));
});

finding("only the newest run directories are kept", async () => {
  for (let i = 0; i < 5; i++) {
    await sandbox.run({ code: `open('/work/n${i}.txt', 'w').write('${i}')` });
  }
  await sandbox.ready(); // the next run's directory exists, and pruning has its turn
  const runs = () => [...Deno.readDirSync(env.workRoot)].filter((e) => e.name.startsWith("run-"));
  // Five runs left files: only pruning brings the count down to keep_runs (3, live ones included).
  await waitFor(() => runs().length <= 3, 60_000, "pruning to keep_runs");
});
