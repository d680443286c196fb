/**
 * Attacks on what watches a run rather than on a limit's number: the memory
 * watch starved of descriptors (Deno then reads the resident size as 0), the
 * copy-out handed a buffer that grows after its check or killed half-way,
 * and the process's main thread flooded with messages. Under a user's
 * grants (`exec --json`, or the model's `execute_code` in `ask --json`,
 * through the launcher), never `-A`; every other limit has ample room.
 */
import assert from "node:assert/strict";
import { attack, AttackUser, type Outcome } from "./attack_user.ts";
import { sandboxPids } from "../support/sandbox.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const user = await AttackUser.start();
addEventListener("unload", () => void user[Symbol.asyncDispose]());

const BRIDGE = `js = __import__("j" + "s")\n`;
/** memory_mb = 128: the process is killed past 128 + 384 MB resident. */
const MEMORY = { memory_mb: 128 };
const RSS_LIMIT_MB = 128 + 384;
/** How far past the limit a kill may come: one 100 ms report of the fastest growth here. */
const RSS_MARGIN_MB = 1024;

/** Python that opens the data file until the process has no free descriptor. */
function fillDescriptors(dataFile: string): string {
  return `${BRIDGE}held = []\ntry:\n    while True:\n` +
    `        held.append(js.Deno.openSync(${JSON.stringify(dataFile)}))\n` +
    `except Exception as e:\n    print("held", len(held), "then:", str(e)[:40])\n`;
}

/** Python that allocates 2 GB outside the WebAssembly heap, 64 MB at a time. */
const GROW_2GB =
  `keep = []\nfor _ in range(32):\n    keep.append(js.Uint8Array.new(64 * 2**20).fill(1))\n` +
  `print("grew to 2 GB")\n`;

/** Killed for memory at the cap: measured near it, or refused as unmeasurable. */
function killedAtCap(ok: boolean, error: string): void {
  assert.equal(ok, false, error);
  assert.match(
    error,
    /the sandbox used more than 128 MB of memory|memory could not be checked against its 128 MB limit/,
  );
  const reached = Number(/reached (\d+) MB/.exec(error)?.[1] ?? NaN);
  if (!Number.isNaN(reached)) assert.ok(reached < RSS_LIMIT_MB + RSS_MARGIN_MB, `${reached} MB`);
}

attack(
  "a run that fills its descriptor table and stays small runs to its end, measured",
  async () => {
    const r = await user.exec(
      `${fillDescriptors(`${user.dataDir}/orbit.csv`)}import time\ntime.sleep(0.5)\nprint("done")`,
      MEMORY,
    );
    assert.equal(r.json.ok, true, JSON.stringify(r.json));
    assert.match(r.json.stdout, /^held \d{3,} then: .*Too many open files/);
    assert.match(r.json.stdout, /done\n$/);
  },
);

attack(
  "exec: a run that fills its descriptor table and then grows to 2 GB is killed at the cap",
  async () => {
    const r = await user.exec(`${fillDescriptors(`${user.dataDir}/orbit.csv`)}${GROW_2GB}`, MEMORY);
    killedAtCap(r.json.ok, r.json.error ?? "");
    assert.doesNotMatch(r.json.stdout, /grew to 2 GB/);
  },
);

attack(
  "execute_code: a run that fills its descriptor table and then grows to 2 GB is killed at the cap",
  async () => {
    const code = `${fillDescriptors(`${user.dataDir}/orbit.csv`)}${GROW_2GB}`;
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              toolCalls: [{ name: "execute_code", arguments: { description: "grows", code } }],
            },
          },
          { expect: { lastRole: "tool" }, respond: { text: "The analysis was stopped." } },
        ],
      },
    });
    const r = await user.ask("analyse the orbit", llm.url, MEMORY);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(llm.failures, []);
    const out = JSON.parse(r.stdout);
    const call = out.tool_calls[0];
    assert.equal(call.name, "execute_code");
    killedAtCap(call.result.ok, String(call.result.error));
  },
);

attack(
  "a thread that keeps the descriptor table full while the run grows gets it killed at the cap",
  async () => {
    // A nested worker fills the table and then grabs every descriptor that
    // comes free, the watch's too: the watch then reads 0, which is a kill.
    const grab = `const k = []; for (;;) { try { k.push(Deno.openSync(${
      JSON.stringify(`${user.dataDir}/orbit.csv`)
    })); } catch {} }`;
    const worker = `new Worker('data:text/javascript,' + encodeURIComponent(${
      JSON.stringify(grab)
    }), { type: 'module' })`;
    const r = await user.exec(
      `${BRIDGE}js.eval(${JSON.stringify(worker)})
import time
time.sleep(0.5)
${GROW_2GB}`,
      MEMORY,
    );
    killedAtCap(r.json.ok, r.json.error ?? "");
  },
);

attack("a growable shared buffer handed to the copy-out keeps nothing", async () => {
  const before = new Set(await runDirs());
  // Every file's contents: a length-tracking view of a growable shared buffer,
  // empty when it is checked and grown from the worker afterwards.
  const r = await user.exec(
    `${BRIDGE}fs = __import__("pyodide_" + "js").FS\nfor i in range(100):\n    open(f"/work/f{i}", "w").close()\n` +
      `js.eval("globalThis.sab = new SharedArrayBuffer(0, { maxByteLength: 2**28 }); ` +
      `globalThis.view = new Uint8Array(sab); ` +
      `Object.defineProperty(view, 'buffer', { value: new ArrayBuffer(8) }); ` +
      `setInterval(() => { if (sab.byteLength < sab.maxByteLength) sab.grow(Math.min(sab.maxByteLength, sab.byteLength + 2**22)); }, 1)")\n` +
      `js.eval("(fs) => { fs.readFile = () => view; }")(fs)`,
    { max_work_mb: 2 },
  );
  assert.equal(r.json.ok, false, JSON.stringify(r.json));
  assert.match(r.json.error ?? "", /files were not kept: .*not a plain buffer/);
  assert.equal(r.json.files, undefined);
  for (const runDir of await runDirs()) if (!before.has(runDir)) await assertNothingKept(runDir);
});

attack(
  "messages flooding the worker's global channel do not reach the process's main thread",
  async () => {
    // Two million small messages, then one of a million objects: the run goes
    // on, and its memory reports with it.
    const r = await user.exec(
      `${BRIDGE}js.eval("for (let i = 0; i < 2000000; i++) self.postMessage(i)")\n` +
        `js.eval("self.postMessage(Array.from({ length: 1000000 }, (_, i) => ({ i })))")\n` +
        `print("still here")`,
      MEMORY,
    );
    assert.equal(r.json.ok, true, JSON.stringify(r.json));
    assert.equal(r.json.stdout, "still here\n");
  },
);

attack("a copy-out killed half-way keeps nothing", async () => {
  // Many files, copied out one asynchronous write at a time: the process is
  // stopped once the first are on disk, then killed.
  const code = `for i in range(5000):\n    open(f"/work/f{i}", "wb").write(b"x" * 8000)\n`;
  let caught: string | undefined;
  for (let attempt = 0; attempt < 3 && !caught; attempt++) {
    const before = new Set(await runDirs());
    const exec = user.exec(code);
    let outcome: Outcome | undefined;
    exec.then((r) => outcome = r);
    while (!outcome) {
      const runDir = (await runDirs()).find((d) => !before.has(d));
      const staged = runDir ? await entries(`${runDir}/work.part`) : [];
      const pid = runDir && staged.length
        ? sandboxPids(user.workRoot).find((p) => pidOf(p, runDir))
        : undefined;
      if (runDir && pid) {
        Deno.kill(pid, "SIGSTOP");
        if ((await entries(`${runDir}/work.part`)).length) {
          caught = runDir;
          assert.deepEqual(
            await entries(`${runDir}/work`),
            [],
            "nothing in the work directory yet",
          );
        }
        Deno.kill(pid, "SIGKILL");
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const r = await exec;
    if (!caught) continue; // the copy-out finished first: again
    assert.equal(r.json.ok, false, JSON.stringify(r.json));
    assert.equal(r.json.files, undefined, "no file kept");
  }
  assert.ok(caught, "the copy-out was never caught half-way");
  await assertNothingKept(caught);
});

/** The run directories below the work root. */
async function runDirs(): Promise<string[]> {
  const dirs = await Array.fromAsync(Deno.readDir(user.workRoot)).catch(() => []);
  return dirs.filter((d) => d.name.startsWith("run-")).map((d) => `${user.workRoot}/${d.name}`);
}

async function entries(dir: string): Promise<string[]> {
  return await Array.fromAsync(Deno.readDir(dir), (e) => e.name).catch(() => []);
}

/** Whether the sandbox process `pid` belongs to `runDir` (its grants name it). */
function pidOf(pid: number, runDir: string): boolean {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes(`${runDir}/work`);
  } catch {
    return false;
  }
}

/** The run directory holds no file and no staging directory. */
async function assertNothingKept(runDir: string): Promise<void> {
  assert.deepEqual(await entries(`${runDir}/work`), [], `${runDir}/work is empty`);
  assert.ok(!(await entries(runDir)).includes("work.part"), `${runDir}/work.part is gone`);
}
