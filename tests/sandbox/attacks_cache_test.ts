/**
 * Class 1 attacks, under a user's grants: sandbox code tries to make the
 * host write outside the run directory — Deno's module cache (imports and
 * workers of local, data: and blob: modules), web storage, temporary
 * directories, the host paths of its own run. The user's DENO_DIR is a
 * private copy here, so anything the sandbox added to it would show.
 */
import assert from "node:assert/strict";
import { assertSameTree, attack, AttackUser, listTree } from "./attack_user.ts";
import { seedDir } from "../../src/sandbox/deno_cache.ts";
import { SNAPSHOT_PATH } from "../support/sandbox.ts";

/** The Deno cache seed every sandbox process starts from: written once, never by a run. */
const SEED = seedDir(SNAPSHOT_PATH) as string;

const user = await AttackUser.start();
addEventListener("unload", () => void user[Symbol.asyncDispose]());

/** A copy of the developer's npm cache: the agent needs its packages, nothing else. */
const home = Deno.env.get("HOME") ?? "/root";
const realDenoDir = Deno.env.get("DENO_DIR") ?? `${home}/.cache/deno`;
const denoDir = `${user.dir}/deno-dir`;
await Deno.mkdir(denoDir);
const copied = await new Deno.Command("cp", { args: ["-r", `${realDenoDir}/npm`, denoDir] })
  .output();
assert.ok(copied.success, "the npm cache was copied");
const env = { DENO_DIR: denoDir };

await Deno.writeTextFile(`${user.dataDir}/mod.js`, "export const MARK = 'ATTACK-JS-' + 6 * 7;\n");
await Deno.writeTextFile(`${user.dataDir}/mod.ts`, "export const MARK: string = 'ATTACK-TS';\n");
await Deno.writeTextFile(
  `${user.dataDir}/worker.js`,
  "self.postMessage('worker ran'); self.close();\n",
);

// The agent's own modules settle in the copy first (a user's cache is warm).
const warm = await user.exec("print('warm')", {}, env);
assert.equal(warm.json.stdout, "warm\n", JSON.stringify(warm));

/**
 * Runs `code` and asserts that no file in the DENO_DIR copy was added or
 * mentions the data directory or an attack's modules (the agent's own
 * cache entries change run to run: they are not the sandbox's), and that
 * nothing outside the run directories changed.
 */
async function nothingWritten(code: string) {
  const cacheBefore = await listTree(denoDir, []);
  const before = await user.listing([denoDir]);
  const seedBefore = await listTree(SEED, []);
  const r = await user.exec(code, {}, env);
  assertSameTree(seedBefore, await listTree(SEED, []));
  const cacheAfter = await listTree(denoDir, []);
  const added = [...cacheAfter.keys()].filter((k) => !cacheBefore.has(k));
  assert.deepEqual(added, [], "no file was added to DENO_DIR");
  for (const path of cacheAfter.keys()) {
    if (path.startsWith(`${denoDir}/npm/`)) continue;
    const text = new TextDecoder().decode(await Deno.readFile(path).catch(() => new Uint8Array()));
    for (const mark of [user.dataDir, "ATTACK-", "text/javascript,export", "blob:"]) {
      assert.ok(!text.includes(mark), `${path} mentions ${mark}`);
    }
  }
  assertSameTree(before, await user.listing([denoDir]));
  await user.assertRunDirsClean();
  return r;
}

/** The js bridge, reached past the static import check as an attacker would. */
const BRIDGE =
  `js = __import__("j" + "s")\nffi = __import__("pyodide.ff" + "i", fromlist=["run_sync"])\n`;

/**
 * Starts `expr` (a promise) in the worker. Python cannot wait for it (the
 * run is synchronous): it settles while the run's result goes out, before
 * the process is killed, which is when the cache entries were written.
 */
const js = (expr: string) =>
  `${BRIDGE}try:\n    getattr(js, "eval")(${JSON.stringify(expr)})\n    print("STARTED")\n` +
  `except BaseException as e:\n    print("REFUSED", type(e).__name__, str(e)[:200])\n`;

attack(
  "a local .js module imported through the js bridge leaves nothing in the Deno cache",
  async () => {
    const r = await nothingWritten(
      js(`import("file://${user.dataDir}/mod.js").then((m) => m.MARK)`),
    );
    // Reading the data directory is allowed; the cache entry went to the run's private cache.
    assert.match(r.json.stdout, /STARTED/);
  },
);

attack("a local .ts module (transpiled) leaves nothing in the Deno cache", async () => {
  const r = await nothingWritten(js(`import("file://${user.dataDir}/mod.ts").then((m) => m.MARK)`));
  assert.match(r.json.stdout, /STARTED/);
});

attack("a worker started from a data file leaves nothing in the Deno cache", async () => {
  const r = await nothingWritten(js(
    `new Promise((ok) => { const w = new Worker("file://${user.dataDir}/worker.js", { type: "module" });` +
      ` w.onmessage = (e) => ok(e.data); w.onerror = (e) => { e.preventDefault(); ok("error " + e.message); }; })`,
  ));
  assert.match(r.json.stdout, /STARTED/);
});

attack("a data: URL module imported twice leaves nothing in the Deno cache", async () => {
  const mod = `data:text/javascript,export default ${"'x'.repeat(10)+".repeat(50)}'DATA'`;
  const r = await nothingWritten(
    js(`import("${mod}").then(() => import("${mod}#2")).then((m) => m.default.slice(-4))`),
  );
  assert.match(r.json.stdout, /STARTED/);
});

attack("a blob: URL module leaves nothing in the Deno cache", async () => {
  const r = await nothingWritten(js(
    `import(URL.createObjectURL(new Blob(["export const v = 'BLOB'"], { type: "text/javascript" }))).then((m) => m.v)`,
  ));
  assert.match(r.json.stdout, /STARTED/);
});

attack(
  "a module written to /work and imported by its in-sandbox or its host path is not found",
  async () => {
    const r = await nothingWritten(
      `open("/work/evil.js", "w").write("export const v = 'EVIL'")\n` +
        js(`import("file:///work/evil.js").then((m) => m.v)`) +
        `try:\n    js.Deno.readDirSync("${user.workRoot}")\n    print("LEAK")\n` +
        `except BaseException as e:\n    print("REFUSED", type(e).__name__)\n`,
    );
    assert.match(r.json.stdout, /STARTED\nREFUSED/);
  },
);

attack("Deno file writes, temporary directories and web storage are refused", async () => {
  const r = await nothingWritten(
    `${BRIDGE}Deno = js.Deno\n` +
      `for name, f in [("write", lambda: Deno.writeTextFileSync("${user.workRoot}/x", "x")),\n` +
      `                ("tempdir", lambda: Deno.makeTempDirSync()),\n` +
      `                ("mkdir", lambda: Deno.mkdirSync("${user.dir}/made")),\n` +
      `                ("storage", lambda: js.localStorage.setItem("k", "v")),\n` +
      `                ("caches", lambda: js.caches.open("c"))]:\n` +
      `    try:\n        f()\n        print("LEAK", name)\n` +
      `    except BaseException as e:\n        print("REFUSED", name, type(e).__name__)\n`,
  );
  assert.doesNotMatch(r.json.stdout, /LEAK/);
  assert.equal((r.json.stdout.match(/REFUSED/g) ?? []).length, 5, r.json.stdout);
});

attack("Python's /tmp and home are in memory, not on the host", async () => {
  const mark = `accel-attack-${crypto.randomUUID()}`;
  const r = await nothingWritten(
    `import os\nopen("/tmp/${mark}", "w").write("x")\nopen(os.path.expanduser("~/${mark}"), "w").write("x")\nprint("wrote")`,
  );
  assert.equal(r.json.stdout, "wrote\n");
  await assert.rejects(Deno.lstat(`/tmp/${mark}`));
});

attack("a sandbox start makes no network connection (no update check, no DNS)", async () => {
  const strace = await new Deno.Command("strace", { args: ["-V"] }).output().catch(() => undefined);
  if (!strace?.success) return console.log("strace is not available: skipped");
  const trace = `${user.dir}/strace.txt`;
  const config = `${user.inputDir}/config.toml`;
  await user.exec("print(1)", {}, env); // writes the config
  const out = await new Deno.Command("strace", {
    args: [
      "-f",
      "-e",
      "trace=connect,sendto,sendmsg",
      "-o",
      trace,
      Deno.execPath(),
      "run",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `${new URL("../../launch.ts", import.meta.url).pathname}`,
      "--config",
      config,
      "exec",
      `${user.inputDir}/attack.py`,
      "--json",
    ],
    env: { ...env, DENO_NO_UPDATE_CHECK: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stdout).includes('"ok": true'), true);
  const calls = (await Deno.readTextFile(trace)).split("\n")
    .filter((l) => /connect\(|sendto\(|sendmsg\(/.test(l))
    .filter((l) => /AF_INET|AF_INET6|sin_port|:53\b/.test(l));
  assert.deepEqual(calls, [], "no socket reached out");
});
