/**
 * `eval --out FILE` through the launcher: the report is printed before it is
 * written, so a file that cannot be written (a full disk) loses nothing and
 * is said in one line; the file is written whole (0600), or not at all.
 */
import assert from "node:assert/strict";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { startScriptedEval } from "../support/scripted_eval_server.ts";
import { shippedTasks } from "../eval/scripted_model.ts";
import { canMount, fill, mountTmpfs } from "../support/full_disk.ts";
import { tempDir } from "../support/temp.ts";

async function evalOut(out: string, json: boolean) {
  await using replay = await startScriptedEval(await shippedTasks(), "solving");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `${ROOT}/launch.ts`,
      "eval",
      "--replay",
      "--tasks",
      "find-devices",
      "--out",
      out,
      ...(json ? ["--json"] : []),
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ OPENAI_BASE_URL: replay.url }),
    stdout: "piped",
    stderr: "piped",
  });
  const r = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  // Deno's own note about a display program the default config names, not found here.
  const stderr = text(r.stderr).split("\n").filter((l) => !l.startsWith("Info Failed to resolve"));
  return { code: r.code, stdout: text(r.stdout), stderr: stderr.join("\n") };
}

Deno.test("eval --out writes the whole report, private to the operator", async () => {
  await using dir = await tempDir();
  const out = `${dir.path}/report.json`;
  const r = await evalOut(out, false);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^all\s+4\/4\s+100%/m);
  const report = JSON.parse(await Deno.readTextFile(out));
  assert.equal(report.attempts.length, 4);
  assert.equal((await Deno.stat(out)).mode! & 0o777, 0o600);
  assert.deepEqual([...Deno.readDirSync(dir.path)].map((e) => e.name), ["report.json"]);
});

Deno.test({
  name:
    "eval --out on a full disk prints the report, says in one line it was not written, exit 1, leaves nothing",
  ignore: !(await canMount()),
  fn: async () => {
    await using dir = await tempDir();
    const disk = `${dir.path}/disk`;
    const unmount = await mountTmpfs(disk, "64k");
    try {
      await fill(disk);
      for (const json of [false, true]) {
        const r = await evalOut(`${disk}/report.json`, json);
        assert.equal(r.code, 1, r.stderr);
        // The whole report reached stdout before the write failed.
        if (json) assert.equal(JSON.parse(r.stdout).attempts.length, 4);
        else assert.match(r.stdout, /^all\s+4\/4\s+100%/m);
        const lines = r.stderr.trim().split("\n");
        assert.equal(lines.length, 1, r.stderr);
        assert.match(
          lines[0] ?? "",
          /^accel-agent: \S+report\.json: the report could not be written \(No space left on device \(os error 28\).*\); it is printed above/,
        );
        assert.deepEqual([...Deno.readDirSync(disk)].map((e) => e.name), ["filler"]);
      }
    } finally {
      await unmount();
    }
  },
});
